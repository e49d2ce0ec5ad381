/**
 * The README's TypeScript examples run as written and exit by themselves.
 * Each ```ts block that starts with an import is compiled (types stripped)
 * and run by Node in the repository, against a daemon on port 0: its URL
 * replaces the default one, the only change made to the example.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { transformSync } from "esbuild";
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "./helpers/daemon.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const examples = [...readme.matchAll(/```ts\n(import [\s\S]*?)```/g)].map((match) => match[1]!);
const DEFAULT_URL = "ws://127.0.0.1:7373";

function runExample(source: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code } = transformSync(source, { loader: "ts", format: "esm" });
  // In the repository, so `@execmux/client` resolves as it does for a user of the clone.
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (data: Buffer) => (stdout += data.toString()));
  child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve) => child.once("close", (exitCode) => resolve({ code: exitCode, stdout, stderr })));
}

describe("README examples", () => {
  it("has runnable examples, each naming the default daemon URL", () => {
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) expect(example).toContain(DEFAULT_URL);
  });

  it.each(examples.map((example, index) => [index + 1, example] as const))("example %i runs against a daemon and exits 0 by itself", async (_index, example) => {
    const daemon = await startTestDaemon();
    const result = await runExample(example.replaceAll(DEFAULT_URL, daemon.url));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).not.toBe("");
  });
});
