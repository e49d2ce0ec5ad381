/**
 * `npm pack` of each package is complete: everything the package's manifest
 * names and everything its code loads is in the tarball or a declared
 * dependency. (The fresh-clone test covers the bin link on install.)
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  main?: string;
  types?: string;
  bin?: Record<string, string>;
  exports?: Record<string, { types: string; default: string }>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  publishConfig?: { access?: string };
}

/** The files `npm pack` would put in the tarball. */
function packedFiles(workspace: string): string[] {
  const output = execFileSync("npm", ["pack", "--dry-run", "--json", "--workspace", workspace], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return (JSON.parse(output) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
}

const normalize = (path: string) => path.replace(/^\.\//, "");
/** Package names of the bare specifiers that compiled code imports, statically or with import("..."). */
function importedPackages(source: string): string[] {
  const specifiers = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\(\s*)"([^".][^"]*)"/g)].map((match) => match[1]!);
  return specifiers
    .filter((specifier) => !specifier.startsWith("node:") && !builtinModules.includes(specifier))
    .map((specifier) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/"));
}

describe.each(["shared", "client-sdk", "server"])("npm pack of %s", (workspace) => {
  const manifest = JSON.parse(readFileSync(`${root}${workspace}/package.json`, "utf8")) as Manifest;
  const files = packedFiles(workspace);

  it("is publishable under our scope", () => {
    expect(manifest.name).toMatch(/^@execmux\//);
    expect(manifest.private).toBeUndefined();
    expect(manifest.publishConfig?.access).toBe("public");
  });

  it("has a license (the repository's) and a README of its own in the tarball", () => {
    expect(manifest.license).toBe("MIT");
    expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md"]));
    expect(readFileSync(`${root}${workspace}/LICENSE`, "utf8")).toBe(readFileSync(`${root}LICENSE`, "utf8"));
    expect(readFileSync(`${root}${workspace}/README.md`, "utf8")).toContain(`# ${manifest.name}\n`);
  });

  it("pins its sibling packages at its own version, as they are published together", () => {
    const siblings = Object.entries(manifest.dependencies ?? {}).filter(([name]) => name.startsWith("@execmux/"));
    for (const [name, range] of siblings) expect(range, name).toBe(manifest.version);
  });

  it("contains every file its manifest names", () => {
    const named = [
      manifest.main,
      manifest.types,
      ...Object.values(manifest.bin ?? {}),
      ...Object.values(manifest.exports ?? {}).flatMap((entry) => [entry.types, entry.default]),
    ].filter((path): path is string => path !== undefined);
    expect(named.length).toBeGreaterThan(0);
    for (const path of named) expect(files, path).toContain(normalize(path));
  });

  it("declares every package its code imports", () => {
    const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {})]);
    const code = files.filter((path) => /\.(m?js)$/.test(path) && !path.startsWith("dist/browser/") && !path.startsWith("console-dist/"));
    expect(code.length).toBeGreaterThan(0);
    for (const path of code) {
      for (const name of importedPackages(readFileSync(`${root}${workspace}/${path}`, "utf8"))) expect(declared, `${path} imports ${name}`).toContain(name);
    }
  });
});

describe("the server package", () => {
  it("ships its bin as a committed file (linked before the build runs) and the console it serves", () => {
    const manifest = JSON.parse(readFileSync(`${root}server/package.json`, "utf8")) as Manifest;
    const bin = normalize(manifest.bin!.execmux!);
    expect(bin.startsWith("dist/")).toBe(false);
    expect(execFileSync("git", ["ls-files", `server/${bin}`], { cwd: root, encoding: "utf8" }).trim()).toBe(`server/${bin}`);
    const files = packedFiles("server");
    for (const path of [bin, "dist/cli.js", "console-dist/index.html", "console-dist/console.js", "console-dist/execmux-client.js"]) expect(files).toContain(path);
  });
});
