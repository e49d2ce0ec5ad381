/**
 * The real Codex agent, driven by a scripted model, uses an exec-server as its
 * remote environment: the upstream `codex exec-server` and execmux, side by
 * side, so the two can be compared. Every scenario checks real effects: files
 * on disk, the tool output the model was given, the agent's exit status, and
 * (through a tap on the WebSocket) that the work went over the exec-server.
 * A failing scenario prints what the agent asked that the server did not
 * serve; EXECMUX_AGENT_TAP_DIR=DIR keeps every run's frames.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, onTestFailed, onTestFinished, vi } from "vitest";
import { runCodexAgent, type AgentRun } from "./helpers/codex-agent.js";
import { spawnDaemon } from "./helpers/cli.js";
import { MockModel, type ModelReply, type ModelRequest, type Turn } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { startUpstreamExecServer } from "./helpers/upstream.js";
import { WsTap } from "./helpers/ws-tap.js";

/**
 * Both as a user starts them, each with a scratch HOME: the agent runs its
 * commands in login shells, which would otherwise read this machine's own
 * profile (and wait on whatever it waits on).
 */
const execServers = {
  upstream: async () => (await startUpstreamExecServer()).url,
  execmux: async () => (await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { HOME: scratchDirectory("agent-execmux-home") })).url,
};

interface AgentSession {
  readonly project: string;
  readonly model: MockModel;
  readonly tap: WsTap;
  readonly run: AgentRun;
}

/** Starts the exec-server, a tap in front of it and the scripted model, then runs the agent once in a fresh project. */
async function driveAgent(server: keyof typeof execServers, turns: Turn[], files: Record<string, string> = {}): Promise<AgentSession> {
  const project = realpathSync(scratchDirectory("agent-project"));
  for (const [path, text] of Object.entries(files)) writeFileSync(join(project, path), text);
  const tap = await WsTap.start(await execServers[server]());
  const model = await MockModel.start(turns);
  onTestFailed(() => console.log(`[${server}] ${summarizeUnserved(tap)}\nscripted model: ${model.failures.join("; ") || "ran as written"}`));
  onTestFinished(() => saveTranscript(server, tap));
  const run = await runCodexAgent({ execServerUrl: tap.url, modelBaseUrl: model.baseUrl, projectDir: project, prompt: "Run the scripted steps." });
  return { project, model, tap, run };
}

/**
 * What the agent asked that the server refused or left unanswered, one line
 * per method and error, with one example: the first thing to read when a
 * scenario fails against a server.
 */
function summarizeUnserved(tap: WsTap): string {
  const groups = new Map<string, { count: number; example: string }>();
  for (const { request, reply } of tap.unserved()) {
    const outcome = reply?.error ? `${reply.error.code} ${reply.error.message}` : "no reply";
    const key = `${request.method} -> ${outcome}`;
    const group = groups.get(key) ?? { count: 0, example: JSON.stringify(request.params) };
    group.count++;
    groups.set(key, group);
  }
  const lines = [...groups].map(([key, { count, example }]) => `  ${key} (x${count}), e.g. params ${example}`);
  return `requests not served:\n${lines.join("\n") || "  (none)"}`;
}

/** EXECMUX_AGENT_TAP_DIR=DIR keeps every frame of every run there, one file a scenario and server, to compare servers. */
function saveTranscript(server: string, tap: WsTap): void {
  const directory = process.env.EXECMUX_AGENT_TAP_DIR;
  if (!directory) return;
  const scenario = (expect.getState().currentTestName ?? "unnamed").split(" > ").at(-1)!.replace(/[^a-zA-Z0-9]+/g, "-");
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, `${scenario}.${server}.log`), `${tap.transcript()}\n`);
}

/** The agent finished its turn normally and printed the model's last message. */
function expectCleanRun({ run, model }: AgentSession, lastMessage: string): void {
  expect(model.failures, run.stderr).toEqual([]);
  expect(run, run.stderr).toMatchObject({ exitCode: 0, timedOut: false });
  expect(run.stdout).toContain(lastMessage);
}

const call = (name: string, args: Record<string, unknown>): ModelReply => ({ calls: [{ name, arguments: args }] });
const say = (message: string): Turn => () => ({ message });

/** The unified-exec id of a process left running, from the tool output Codex gives the model. */
function sessionIdIn(request: ModelRequest): number {
  const match = /session ID (\d+)/.exec(request.toolResult.output);
  if (!match) throw new Error(`no running session in: ${request.toolResult.output}`);
  return Number(match[1]);
}

describe.each(Object.keys(execServers) as (keyof typeof execServers)[])("the Codex agent with %s as its remote environment", (server) => {
  it("runs a command in the project directory", async () => {
    const session = await driveAgent(server, [() => call("exec_command", { cmd: "pwd && echo made-remotely > from-agent.txt" }), say("ran it")]);
    const { project, model, tap } = session;

    expectCleanRun(session, "ran it");
    const output = model.toolResults[0]!.output;
    expect(output).toContain("Process exited with code 0");
    expect(output).toContain(project);
    expect(readFileSync(join(project, "from-agent.txt"), "utf8")).toBe("made-remotely\n");
    expect(tap.requestsFor("process/start")).toEqual([
      expect.objectContaining({ cwd: pathToFileURL(project).href, argv: expect.arrayContaining(["pwd && echo made-remotely > from-agent.txt"]) }),
    ]);
  });

  it("watches the missing project markers, and is told when one appears (fs/watchMissing)", async () => {
    const session = await driveAgent(server, [() => call("exec_command", { cmd: "mkdir .git && echo made" }), say("made a repository")]);
    const { project, tap } = session;

    expectCleanRun(session, "made a repository");
    const watch = tap.exchanges().find((exchange) => exchange.request.method === "fs/watchMissing");
    expect(watch?.request.params).toMatchObject({ missing: expect.arrayContaining([pathToFileURL(join(project, ".git")).href]) });
    expect(watch?.reply?.result).toEqual({ watching: true });
    const { watchId } = watch!.request.params as { watchId: number };
    await vi.waitFor(() => expect(tap.notifications("fs/missingChanged")).toEqual([{ watchId }]));
  });

  it("keeps an interactive session across exec_command and write_stdin", async () => {
    let sessionId = 0;
    let seen = "";
    const write = (chars: string, repeat = false): ModelReply => ({
      calls: [{ name: "write_stdin", arguments: { session_id: sessionId, chars, yield_time_ms: 300 } }],
      repeat,
    });
    const session = await driveAgent(server, [
      () => call("exec_command", { cmd: "bash --norc --noprofile -i", tty: true, yield_time_ms: 300 }),
      (request) => {
        sessionId = sessionIdIn(request);
        return write("export AGENT_SESSION_VAR=kept-across-calls\n");
      },
      () => write("echo value=$AGENT_SESSION_VAR\n"),
      // An interactive shell answers when it answers: poll (empty chars) until the echo is back.
      (request) => {
        seen += request.toolResult.output;
        return seen.includes("value=kept-across-calls") ? write("exit 0\n") : write("", true);
      },
      (request) =>
        request.toolResult.output.includes("Process exited with code") ? { message: "shell done" } : write("", true),
    ]);
    const { model, tap } = session;

    expectCleanRun(session, "shell done");
    expect(seen).toContain("value=kept-across-calls");
    expect(model.toolResults.at(-1)!.output).toContain("Process exited with code 0");
    // One process, kept between the calls: every keystroke went to the one process/start.
    const [start, ...otherStarts] = tap.requestsFor("process/start") as { processId: string; tty: boolean }[];
    expect(otherStarts).toEqual([]);
    expect(start).toMatchObject({ tty: true });
    const writes = tap.requestsFor("process/write") as { processId: string }[];
    expect(writes.length).toBeGreaterThanOrEqual(3);
    expect(new Set(writes.map((write) => write.processId))).toEqual(new Set([start!.processId]));
  });

  it("reads the remote AGENTS.md into what the model sees", async () => {
    const rule = "Project rule 4711: every answer ends with PINEAPPLE.";
    const session = await driveAgent(server, [say("read the rules PINEAPPLE")], { "AGENTS.md": `${rule}\n` });
    const { project, model, tap } = session;

    expectCleanRun(session, "read the rules PINEAPPLE");
    const firstRequest = model.requests[0]!.text;
    expect(firstRequest).toContain(`# AGENTS.md instructions for ${project}`);
    expect(firstRequest).toContain(rule);
    expect(tap.requestsFor("fs/readFile")).toContainEqual(expect.objectContaining({ path: pathToFileURL(join(project, "AGENTS.md")).href }));
  });

  it("reports a failing command's exit code to the model", async () => {
    const session = await driveAgent(server, [
      () => call("exec_command", { cmd: "echo failing-on-purpose >&2; exit 7" }),
      say("reported the failure"),
    ]);
    const { model, tap } = session;

    // The command failed, the agent did not: it told the model and finished its turn.
    expectCleanRun(session, "reported the failure");
    expect(model.toolResults[0]!.output).toContain("failing-on-purpose");
    expect(model.toolResults[0]!.output).toContain("Process exited with code 7");
    expect(tap.notifications("process/exited")).toEqual([expect.objectContaining({ exitCode: 7 })]);
  });

  it("writes files with apply_patch and reads them back", async () => {
    const patch = [
      "*** Begin Patch",
      "*** Update File: greeting.txt",
      "@@",
      "-hello from the project",
      "+hello from apply_patch",
      "*** Add File: notes/added.txt",
      "+added by the agent",
      "*** End Patch",
      "",
    ].join("\n");
    const session = await driveAgent(
      server,
      [
        () => ({ calls: [{ name: "apply_patch", input: patch }] }),
        () => call("exec_command", { cmd: "cat greeting.txt notes/added.txt" }),
        say("files edited"),
      ],
      { "greeting.txt": "hello from the project\nsecond line stays\n" },
    );
    const { project, model, tap } = session;

    expectCleanRun(session, "files edited");
    const [patched, readBack] = model.toolResults;
    expect(patched!.output).toContain("Success. Updated the following files:");
    expect(patched!.output).toContain("A notes/added.txt");
    expect(patched!.output).toContain("M greeting.txt");
    expect(readBack!.output).toContain("hello from apply_patch\nsecond line stays\nadded by the agent\n");
    expect(readFileSync(join(project, "greeting.txt"), "utf8")).toBe("hello from apply_patch\nsecond line stays\n");
    expect(readFileSync(join(project, "notes", "added.txt"), "utf8")).toBe("added by the agent\n");
    // The edit went over the exec-server: the agent read and wrote the files remotely.
    const written = (tap.requestsFor("fs/writeFile") as { path: string }[]).map((params) => params.path);
    expect(written).toContain(pathToFileURL(join(project, "greeting.txt")).href);
    expect(written).toContain(pathToFileURL(join(project, "notes", "added.txt")).href);
    expect(tap.requestsFor("fs/readFile")).toContainEqual(expect.objectContaining({ path: pathToFileURL(join(project, "greeting.txt")).href }));
  });
});
