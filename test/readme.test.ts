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

  it("gives the install and test commands that .ci/run runs", () => {
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm install && npm test");
    const commands = ci.split("\n").filter((line) => /^npm (?!--version)/.test(line));
    expect(commands).toEqual(["npm install", "npm test"]);
  });
});
