/**
 * The daemon runs with V8's memory reducer off (server/bin/execmux.js says
 * why): a flag Node takes only on its command line, so every way the project
 * starts a daemon must pass it, and the bench must measure the daemon as
 * users run it.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DAEMON_NODE_FLAGS } from "../bench/dist/daemon-process.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, "utf8");

describe("the daemon's Node flags", () => {
  it("are passed by npm start, the execmux command, the image's entrypoint and the bench", () => {
    expect(DAEMON_NODE_FLAGS).toEqual(["--no-memory-reducer"]);
    const start = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts.start!;
    expect(start).toMatch(/\bnode --no-memory-reducer server\/dist\/cli\.js serve\b/);
    expect(read("server/bin/execmux.js").split("\n")[0]).toBe("#!/usr/bin/env -S node --no-memory-reducer");
    expect(read("docker/entrypoint.sh")).toMatch(/exec node --no-memory-reducer .*cli\.js" serve/);
  });

  it("leave the execmux command runnable as a program (env -S splits its shebang)", () => {
    expect(execFileSync(`${root}server/bin/execmux.js`, ["--version"], { encoding: "utf8" })).toMatch(/^execmux \d+\.\d+\.\d+/);
  });
});
