/** The README cannot drift from the code it documents. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configMarkdownTable } from "@execmux/server";
import { ErrorCode } from "@execmux/shared";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8");

describe("README", () => {
  it("has the configuration table generated from the config schema", () => {
    const section = /<!-- config-table:start -->\n([\s\S]*?)\n<!-- config-table:end -->/.exec(readme)?.[1];
    expect(section).toBe(configMarkdownTable());
  });

  it("documents every error code", () => {
    for (const code of Object.values(ErrorCode)) expect(readme).toContain(`| ${code} |`);
  });

  it("never tells anyone to run `npx execmux` outside the clone, where it is someone else's package", () => {
    const mcpConfigs = [...readme.matchAll(/```json\n(\{ "mcpServers"[\s\S]*?)```/g)].map((match) => JSON.parse(match[1]!) as { mcpServers: Record<string, { command: string; args: string[] }> });
    expect(mcpConfigs.length).toBeGreaterThan(0);
    for (const config of mcpConfigs) {
      // Whatever npx's flags (-y, --yes), the bare name would fetch the unrelated package.
      for (const server of Object.values(config.mcpServers)) {
        expect(server.command === "npx" && server.args.some((arg) => arg === "execmux" || arg.startsWith("execmux@"))).toBe(false);
      }
    }
  });

  it("starts the daemon with a command that passes signals to it", () => {
    const scripts = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> }).scripts;
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
