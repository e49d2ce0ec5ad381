/**
 * `npm pack` of each package is complete: everything the package's manifest
 * names and everything its code loads is in the tarball or a declared
 * dependency, and the server's carries its process host prebuilt, so that
 * installing runs no script. (The fresh-clone test covers the bin link on
 * install; the registry test installs the tarballs.)
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types.
import { elfInfo } from "../scripts/elf-info.mjs";

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
  scripts?: Record<string, string>;
  os?: string[];
  cpu?: string[];
}

/** The files `npm pack` would put in the tarball. */
function packedFiles(workspace: string): string[] {
  const output = execFileSync("npm", ["pack", "--dry-run", "--json", "--workspace", workspace], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return (JSON.parse(output) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
}

const normalize = (path: string) => path.replace(/^\.\//, "");
/**
 * Package names of the bare specifiers that compiled code imports, statically or with import("...").
 * Not what a bundled library writes into a template literal as code it generates (ajv's standalone
 * mode: `require("ajv-formats/dist/formats")`, never run by the daemon).
 */
function importedPackages(source: string): string[] {
  const specifiers = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|(?<!`)\brequire\(\s*)"([^".][^"]*)"/g)].map((match) => match[1]!);
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

describe("the server package's process host", () => {
  const manifest = JSON.parse(readFileSync(`${root}server/package.json`, "utf8")) as Manifest;
  // Packing runs the prepack script, which builds the prebuilt host afresh.
  const files = packedFiles("server");
  const platform = `${process.platform}-${process.arch}`;

  it("is in the tarball prebuilt for this platform, statically linked (no loader, no libc needed), with its sources", () => {
    expect(files).toContain(`native/prebuilt/${platform}/execmux-host`);
    expect(elfInfo(`${root}server/native/prebuilt/${platform}/execmux-host`)).toEqual({ arch: process.arch, static: true });
    expect(files).toEqual(expect.arrayContaining(["native/src/main.c", "native/src/host.h"]));
    // The clone's own build (dynamically linked, with debug information) stays out.
    expect(files.filter((path) => path.startsWith("native/bin/"))).toEqual([]);
  });

  it("is built when the package is packed, never when it is installed: no install script, no os or cpu field", () => {
    expect(manifest.scripts).toEqual({ prepack: "node ../scripts/build-native.mjs --prebuilt" });
    expect(files.filter((path) => path.endsWith("binding.gyp"))).toEqual([]);
    // Either would refuse the whole package, client commands included, on a machine that only drives a remote daemon.
    expect(manifest.os).toBeUndefined();
    expect(manifest.cpu).toBeUndefined();
  });

  it("leaves every production dependency without an install script (only the bench's and the build's have one)", () => {
    const lock = JSON.parse(readFileSync(`${root}package-lock.json`, "utf8")) as { packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages).filter(([, entry]) => entry.hasInstallScript);
    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter(([, entry]) => !entry.dev).map(([path]) => path)).toEqual([]);
  });
});
