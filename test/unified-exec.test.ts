/** The agent-facing tools (seeds 000, 001, 003) against a real daemon. */
import { describe, expect, it, vi } from "vitest";
import { connect, toTextOutput, truncateMiddle, UnifiedExec, UnknownSessionIdError } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";

/** Without a login shell: the machine's profile is not what these tests are about. */
async function unified() {
  const daemon = await startTestDaemon();
  const client = await connect(daemon.url);
  const exec = new UnifiedExec(client);
  const execCommand = exec.execCommand.bind(exec);
  exec.execCommand = (params) => execCommand({ login: false, ...params });
  return exec;
}

describe("unified exec", () => {
  it("keeps an exported variable across calls in an interactive bash, and sessions are isolated", async () => {
    const exec = await unified();
    const shell = await exec.execCommand({ cmd: "bash --norc -i", yieldTimeMs: 300 });
    expect(shell.sessionId).toBeDefined();
    await exec.writeStdin({ sessionId: shell.sessionId!, chars: "export CODEX_INTERACTIVE_SHELL_VAR=codex\n", yieldTimeMs: 200 });
    let seen = "";
    await vi.waitFor(async () => {
      seen += (await exec.writeStdin({ sessionId: shell.sessionId!, chars: "echo value=$CODEX_INTERACTIVE_SHELL_VAR\n", yieldTimeMs: 200 })).output;
      expect(seen).toContain("value=codex");
    });

    const other = await exec.execCommand({ cmd: "bash --norc -i", yieldTimeMs: 300 });
    expect(other.sessionId).not.toBe(shell.sessionId);
    let otherSeen = "";
    await vi.waitFor(async () => {
      otherSeen += (await exec.writeStdin({ sessionId: other.sessionId!, chars: "echo other=[$CODEX_INTERACTIVE_SHELL_VAR]\n", yieldTimeMs: 200 })).output;
      expect(otherSeen).toContain("other=[]");
    });
    await exec.terminateAll();
  });

  it("returns nothing after a short yield, and a later poll returns the output and the exit", async () => {
    const exec = await unified();
    const first = await exec.execCommand({ cmd: "sleep 1 && echo codex", yieldTimeMs: 10 });
    expect(first.sessionId).toBeDefined();
    expect(first.exitCode).toBeUndefined();
    expect(first.output).not.toContain("codex");
    // Polls with empty chars; returns once the process has exited.
    const later = await exec.writeStdin({ sessionId: first.sessionId!, chars: "", yieldTimeMs: 30_000 });
    expect(later.output).toContain("codex");
    expect(later.exitCode).toBe(0);
    expect(later.sessionId).toBeUndefined();
  });

  it("forgets completed commands, and reusing a finished session is an unknown session id", async () => {
    const exec = await unified();
    const done = await exec.execCommand({ cmd: "/bin/echo codex", yieldTimeMs: 5_000 });
    expect(done).toMatchObject({ exitCode: 0 });
    expect(done.sessionId).toBeUndefined();
    expect(done.output).toContain("codex");
    expect(exec.sessionCount).toBe(0);

    const shell = await exec.execCommand({ cmd: "bash --norc -i", yieldTimeMs: 200 });
    const exited = await exec.writeStdin({ sessionId: shell.sessionId!, chars: "exit 5\n", yieldTimeMs: 10_000 });
    expect(exited.exitCode).toBe(5);
    const reuse = await exec.writeStdin({ sessionId: shell.sessionId!, chars: "", yieldTimeMs: 100 }).catch((error: unknown) => error);
    expect(reuse).toBeInstanceOf(UnknownSessionIdError);
    expect((reuse as Error).message).toBe(`unknown session id ${shell.sessionId}`);
  });

  it("keeps output that arrived while nobody was waiting for the next call", async () => {
    const exec = await unified();
    const cat = await exec.execCommand({ cmd: "cat", yieldTimeMs: 100 });
    // A write's reply may follow the process's answer (polling after input): what came with it is this call's.
    let collected = (await exec.writeStdin({ sessionId: cat.sessionId!, chars: "typed-while-away\n", yieldTimeMs: 0 })).output;
    await vi.waitFor(async () => {
      collected += (await exec.writeStdin({ sessionId: cat.sessionId!, chars: "", yieldTimeMs: 50 })).output;
      expect(collected.match(/typed-while-away/g)?.length).toBe(2); // the terminal's echo and cat's copy
    });
    await exec.terminateAll();
  });

  it("clamps the yield time to 60 s with upstream's warning line", async () => {
    const exec = await unified();
    const result = await exec.execCommand({ cmd: "echo codex", yieldTimeMs: 120_000 });
    expect(result.output.startsWith("Warning: requested timeout 120000ms exceeds maximum of 60000ms; clamping to 60000ms.\n")).toBe(true);
    expect(result.output).toContain("codex");
  });

  it("truncates big output in the middle with the original size, through the daemon", async () => {
    const exec = await unified();
    const result = await exec.execCommand({ cmd: "seq 1 100000", yieldTimeMs: 10_000, maxOutputTokens: 100, tty: false });
    expect(result.exitCode).toBe(0);
    const full = Array.from({ length: 100_000 }, (_, index) => `${index + 1}\n`).join("");
    expect(result.originalTokenCount).toBe(Math.ceil(full.length / 4));
    expect(result.output.startsWith("1\n2\n3\n")).toBe(true);
    expect(result.output.endsWith("99999\n100000\n")).toBe(true);
    expect(result.output).toMatch(/…\d+ tokens truncated…/);
    expect(Buffer.byteLength(result.output)).toBeLessThan(400 + 40);
  });
});

describe("truncateMiddle", () => {
  it("never splits a UTF-8 character, whatever the cap", () => {
    const text = "héllo wörld ✓ 日本語テキスト 🎉🎉🎉 ".repeat(20);
    const bytes = new TextEncoder().encode(text);
    for (let cap = 0; cap < 200; cap++) {
      const { text: out, originalTokenCount } = truncateMiddle(bytes, cap);
      expect(out).not.toContain("\uFFFD");
      expect(originalTokenCount).toBe(Math.ceil(bytes.length / 4));
      const [head, tail] = out.split(/…\d+ tokens truncated…/);
      expect(text.startsWith(head!)).toBe(true);
      expect(text.endsWith(tail!)).toBe(true);
      expect(new TextEncoder().encode(head! + tail!).length).toBeLessThanOrEqual(cap);
    }
    expect(truncateMiddle(bytes, bytes.length)).toEqual({ text });
  });
});

describe("toTextOutput", () => {
  it("renders seed 000's format", () => {
    expect(toTextOutput({ wallTimeMs: 1234, exitCode: 0, output: "hello" })).toBe("Wall time: 1.234 seconds\nProcess exited with code 0\nOutput:\nhello");
    expect(toTextOutput({ wallTimeMs: 500, sessionId: 42, originalTokenCount: 1000, output: "abc" })).toBe(
      "Wall time: 0.500 seconds\nProcess running with session ID 42\nWarning: truncated output (original token count: 1000)\nOutput:\nabc",
    );
  });
});
