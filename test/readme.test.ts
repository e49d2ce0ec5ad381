/** The README and docs/ cannot drift from the code they document, nor from each other. */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { configMarkdownTable } from "@execmux/server";
import { ErrorCode } from "@execmux/shared";

const root = fileURLToPath(new URL("..", import.meta.url));
const read = (path: string) => readFileSync(join(root, path), "utf8");
const readme = read("README.md");
const ci = read(".ci/run");
/** README.md and every page under docs/, by path from the repository root. */
const pages = ["README.md", ...readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" }).filter((path) => path.endsWith(".md")).map((path) => `docs/${path}`)];
/**
 * Pages other helpers are writing on their branches: linked from the README
 * and the docs index before they land. Take a page off once it exists.
 */
const PAGES_BEING_WRITTEN = new Set(["docs/upstream-capabilities.md"]);

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchors(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, "");
  return new Set([...withoutCode.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => slug(match[1]!)));
}

describe("README and docs/", () => {
  it("keeps the README a front door", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
    for (const section of ["Quick start", "Pointing Codex at it", "The client SDK", "The `execmux` command", "The web console", "Containers", "More documentation"]) {
      expect(readme).toContain(`\n## ${section}\n`);
    }
  });

  it("has the configuration table generated from the config schema", () => {
    const section = /<!-- config-table:start -->\n([\s\S]*?)\n<!-- config-table:end -->/.exec(read("docs/operations.md"))?.[1];
    expect(section).toBe(configMarkdownTable());
  });

  it("documents every error code", () => {
    const protocol = read("docs/protocol.md");
    for (const code of Object.values(ErrorCode)) expect(protocol).toContain(`| ${code} |`);
  });

  it("has every relative link resolve to a file, and every anchor to a heading", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = read(page).replace(/```[\s\S]*?```/g, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split("#") as [string, string | undefined];
        const file = path === "" ? page : relative(root, join(root, dirname(page), path));
        if (PAGES_BEING_WRITTEN.has(file) && !existsSync(join(root, file))) continue;
        if (!existsSync(join(root, file))) broken.push(`${page}: ${target} (no ${file})`);
        else if (anchor !== undefined && file.endsWith(".md") && !anchors(read(file)).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("lists every page of docs/ in its index", () => {
    const index = read("docs/README.md");
    for (const page of pages.filter((path) => path.startsWith("docs/") && path !== "docs/README.md")) expect(index, page).toContain(`](${page.slice("docs/".length)})`);
  });

  it("never tells anyone to run `npx execmux` outside the clone, where it is someone else's package", () => {
    const mcpConfigs = pages.flatMap((page) =>
      [...read(page).matchAll(/```json\n(\{ "mcpServers"[\s\S]*?)```/g)].map((match) => JSON.parse(match[1]!) as { mcpServers: Record<string, { command: string; args: string[] }> }),
    );
    expect(mcpConfigs.length).toBeGreaterThan(0);
    for (const config of mcpConfigs) {
      // Whatever npx's flags (-y, --yes), the bare name would fetch the unrelated package.
      for (const server of Object.values(config.mcpServers)) {
        expect(server.command === "npx" && server.args.some((arg) => arg === "execmux" || arg.startsWith("execmux@"))).toBe(false);
      }
    }
  });

  it("starts the daemon with a command that passes signals to it", () => {
    const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
    // npm forwards SIGTERM/SIGINT to its child; without exec that child is a shell that does not pass them on.
    expect(scripts.start).toMatch(/^exec node /);
  });

  it("gives the install and test commands that .ci/run runs", () => {
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm install && npm test");
    const commands = ci.split("\n").filter((line) => /^npm (?!--version)/.test(line));
    expect(commands).toEqual(["npm install", "npm test"]);
  });
});
