/**
 * The TypeScript examples of the README and docs/ run as written and exit by
 * themselves. Each ```ts block that starts with an import is saved as an
 * `.mts` file in the repository and run as the README says, `npx tsx FILE`
 * (tsx is a devDependency: `npm install` in a clone provides it), against a
 * daemon on port 0: its URL replaces the default one, the only change made.
 * A fragment that cannot run by itself (it needs a cluster, say) is fenced
 * as ```ts fragment, which renders the same.
 */
import { spawn } from "node:child_process";
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "./helpers/daemon.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const pages = ["README.md", ...readdirSync(`${root}docs`, { recursive: true, encoding: "utf8" }).filter((path) => path.endsWith(".md")).map((path) => `docs/${path}`)];
const examples = pages.flatMap((page) => [...readFileSync(`${root}${page}`, "utf8").matchAll(/```ts\n(import [\s\S]*?)```/g)].map((match) => ({ page, source: match[1]! })));
const DEFAULT_URL = "ws://127.0.0.1:7373";

let saved = 0;

function runExample(source: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // In the repository, so `@execmux/client` resolves as it does for a user of the clone.
  const file = `${root}readme-example-${process.pid}-${++saved}.mts`;
  writeFileSync(file, source);
  const child = spawn("npx", ["--no-install", "tsx", file], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (data: Buffer) => (stdout += data.toString()));
  child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve) =>
    child.once("close", (exitCode) => {
      rmSync(file, { force: true });
      resolve({ code: exitCode, stdout, stderr });
    }),
  );
}

describe("README examples", () => {
  it("has runnable examples, each naming the default daemon URL", () => {
    expect(examples.filter((example) => example.page === "README.md").length).toBeGreaterThanOrEqual(1);
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const example of examples) expect(example.source, example.page).toContain(DEFAULT_URL);
  });

  it.each(examples.map((example, index) => [index + 1, example.page, example.source] as const))("example %i (%s) runs against a daemon and exits 0 by itself", async (_index, _page, source) => {
    const daemon = await startTestDaemon();
    const result = await runExample(source.replaceAll(DEFAULT_URL, daemon.url));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).not.toBe("");
  });
});
