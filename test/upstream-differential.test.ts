/**
 * Differential conformance against the real upstream `codex exec-server`
 * (the version scripts/ensure-upstream.mjs pins): every case runs the same
 * wire steps against both and compares what they answered, upstream being
 * the expected side (test/helpers/differential.ts). One describe per family:
 *   npx vitest run test/upstream-differential.test.ts -t "fs/"
 * DIFFERENTIAL_DUMP=<dir> writes both transcripts of every case there.
 */
import { expect } from "vitest";
import {
  CODEX_INITIALIZE,
  describeDifferential,
  olderThan,
  messagesCutAfter,
  observationOf,
  replacingMember,
  type Deviation,
  type Observation,
} from "./helpers/differential.js";
import {
  readsDisk,
  codexWorkspaceWriteStart,
  ENV,
  events,
  fs,
  http,
  initialize,
  initialized,
  LONG,
  open,
  read,
  readBlock,
  start,
  startParams,
  terminate,
  uri,
  write,
} from "./helpers/exec-server-frames.js";
import { HttpTarget } from "./helpers/http-target.js";
import { upstreamVersion } from "./helpers/upstream.js";

/** After upstream's prefix comes serde_json's diagnostic (what it expected, line and column): ours is JSON.parse's. */
const PARSE_DIAGNOSTIC: Deviation = {
  why: "the text after upstream's prefix is serde_json's parser diagnostic; upstream's own test checks only the prefix",
  project: messagesCutAfter("failed to parse websocket JSON-RPC message from exec-server websocket <peer>: "),
};

/**
 * process/terminate in execmux is graceful (README, Differences): SIGTERM to the tree, SIGKILL after
 * --kill-grace-ms. Every exit code is compared, with execmux's 143 standing for upstream's 137.
 */
const GRACEFUL_TERMINATE: Deviation = {
  why:
    "process/terminate is graceful in execmux (SIGTERM, then SIGKILL after --kill-grace-ms): a child that does not " +
    "trap SIGTERM exits 143 (128 + SIGTERM) where upstream's immediate SIGKILL gives 137 (128 + SIGKILL)",
  project: (transcript) =>
    JSON.parse(JSON.stringify(transcript, (key, value: unknown) => (key === "exitCode" && (value === 137 || value === 143) ? "<death by terminate>" : value))),
  assert: (upstream, execmux) => {
    expect(exitCodesIn(upstream), "upstream kills at once").not.toContain(143);
    expect(exitCodesIn(execmux), "execmux terminates with SIGTERM").toContain(143);
    expect(exitCodesIn(execmux).map((code) => (code === 143 ? 137 : code))).toEqual(exitCodesIn(upstream));
  },
};

/** Every numeric exitCode in a transcript, in order. */
function exitCodesIn(transcript: Observation[]): number[] {
  const codes: number[] = [];
  JSON.stringify(transcript, (key, value: unknown) => {
    if (key === "exitCode" && typeof value === "number") codes.push(value);
    return value;
  });
  return codes;
}

/**
 * One step answered differently on purpose: each side's answer there is asserted, and every
 * other step is compared as usual.
 */
function stepDiffers(why: string, step: string, expected: { upstream: unknown; execmux: unknown }): Deviation {
  return {
    why,
    project: (transcript) => transcript.map((observation) => (observation.step === step ? { step, observed: "<differs on purpose>" } : observation)),
    assert: (upstream, execmux) => {
      expect(observationOf(upstream, step), `upstream at ${step}`).toMatchObject(expected.upstream as object);
      expect(observationOf(execmux, step), `execmux at ${step}`).toMatchObject(expected.execmux as object);
    },
  };
}

/** A request upstream refuses as -32602 and execmux, lenient on purpose (README, Differences), accepts. */
const lenient = (why: string, step: string, upstreamMessage: string, result: Record<string, unknown>) =>
  stepDiffers(why, step, { upstream: { error: { code: -32602, message: upstreamMessage } }, execmux: { result } });

/** Two deviations in one case: both projections, then both assertions. */
function combined(first: Deviation, second: Deviation): Deviation {
  return {
    why: `${first.why}; and ${second.why}`,
    project: (transcript) => {
      const once = first.project ? (first.project(transcript) as Observation[]) : transcript;
      return second.project ? second.project(once) : once;
    },
    assert: (upstream, execmux) => {
      first.assert?.(upstream, execmux);
      second.assert?.(upstream, execmux);
    },
  };
}

describeDifferential("envelope", [
  {
    name: "malformed JSON gets id -1 and -32600, and the socket stays usable",
    handshake: false,
    steps: [{ sendText: "not-json" }, { reply: -1 }, { handshake: true }, { request: "environment/status" }],
    differs: PARSE_DIAGNOSTIC,
  },
  {
    name: "a top-level array, number, string or null is not a JSON-RPC object",
    handshake: false,
    steps: [
      { sendText: "[1,2]" },
      { reply: -1 },
      { sendText: "42" },
      { reply: -1 },
      { sendText: '"text"' },
      { reply: -1 },
      { sendText: "null" },
      { reply: -1 },
    ],
  },
  {
    name: "a frame with only an id (no method, result or error) is a parse error",
    steps: [{ sendText: '{"id":7}' }, { reply: -1 }],
    differs: PARSE_DIAGNOSTIC,
  },
  {
    name: "duplicate object keys",
    handshake: false,
    steps: [{ sendText: '{"id":1,"method":"initialize","method":"initialize","params":{"clientName":"x"}}' }, { reply: -1 }],
    differs: {
      why: "execmux does not refuse duplicate keys in a JSON object, the last one wins (README, Differences); upstream's serde_json refuses the frame as a parse error",
      assert: (upstream, execmux) => {
        expect(observationOf(upstream, "a: reply -1")).toMatchObject({
          id: -1,
          error: { code: -32600, message: expect.stringMatching(/^failed to parse websocket JSON-RPC message from exec-server websocket <peer>: duplicate JSON object key `method`/) },
        });
        expect(observationOf(upstream, "a: at the end")).toEqual({ connection: "open", unasked: [] });
        // execmux answers the initialize the frame is, and the connection stays open as well.
        expect(observationOf(execmux, "a: reply -1")).toBe("<nothing within the time limit>");
        expect(observationOf(execmux, "a: at the end")).toEqual({
          connection: "open",
          unasked: [{ id: 1, result: { sessionId: "<uuid-1>", environmentInfo: "<environmentInfo>" } }],
        });
      },
    },
  },
  {
    name: "initialize sent as a binary frame is accepted",
    handshake: false,
    steps: [{ sendBinary: JSON.stringify({ id: 1, method: "initialize", params: CODEX_INITIALIZE }) }, { reply: 1 }],
  },
  { name: "an unknown method is -32601", steps: [{ request: "foo/bar", params: {} }] },
  { name: "an unknown method before initialize is still -32601", handshake: false, steps: [{ request: "foo/bar" }] },
  {
    name: "an unknown notification closes the connection",
    steps: [{ send: { method: "foo/bar", params: {} } }, { expectClose: true }],
  },
  {
    name: "initialized before initialize closes the connection",
    handshake: false,
    steps: [initialized, { expectClose: true }],
  },
  {
    name: "a reply to a request the server never sent",
    steps: [{ send: { id: 99, result: {} } }, { expectClose: true }],
  },
  { name: "a request with a string id is answered with that id", steps: [{ request: "environment/status", id: "abc" }] },
  {
    name: "a jsonrpc member is ignored",
    handshake: false,
    steps: [initialize(), initialized, { request: "environment/status", extra: { jsonrpc: "2.0" } }],
    differs: {
      why: 'execmux answers a client that sends "jsonrpc":"2.0" in that dialect (README, Protocol); the Codex client ignores the member',
      project: replacingMember("jsonrpc", undefined),
    },
  },
]);

/** The start of the why of a case where execmux accepts what upstream refuses. */
const LENIENT = "execmux is lenient where the request is still unambiguous (README, Differences):";

/** The same request in every gated family, in wire order. */
const oneRequestPerFamily = [
  { request: "environment/info" },
  { request: "environment/status" },
  { request: "process/read", params: { processId: "p" } },
  { request: "fs/getMetadata", params: { path: "file:///" } },
  { request: "http/request", params: { method: "GET", url: "http://127.0.0.1:1/", requestId: "r" } },
];

describeDifferential("handshake", [
  { name: "gating messages per family before initialize", handshake: false, steps: oneRequestPerFamily },
  {
    name: "gating messages per family after initialize but before initialized",
    handshake: false,
    steps: [initialize(), ...oneRequestPerFamily, initialized, { request: "environment/status" }],
  },
  { name: "params that do not decode are -32602 even before initialize", handshake: false, steps: [{ request: "process/start", params: {} }] },
  { name: "a second initialize on one connection", steps: [initialize()] },
  { name: "initialize without clientName, or without params", handshake: false, steps: [{ request: "initialize", params: {} }, { request: "initialize" }] },
  {
    name: "initialized and a first exec call sent right behind initialize, before its reply",
    handshake: false,
    steps: [
      { send: { id: "init", method: "initialize", params: CODEX_INITIALIZE } },
      initialized,
      { send: { id: "first", method: "process/start", params: startParams("p", "true") } },
      { reply: "init" },
      { reply: "first" },
    ],
  },
  {
    name: "unknown fields and a trace member are accepted",
    handshake: false,
    steps: [
      initialize({ futureField: { nested: true } }),
      initialized,
      { request: "process/terminate", params: { processId: "nope", futureField: 1 } },
      {
        request: "environment/status",
        extra: { trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: null } },
      },
    ],
  },
  {
    name: "resume a detached session: the same response",
    handshake: false,
    steps: [
      initialize(),
      initialized,
      { disconnect: "a" },
      { connect: "b" },
      { on: "b", ...initialize({ resumeSessionId: "<session:a>" }), retryWhileCode: -32010 },
    ],
  },
  {
    name: "resume a session another connection holds is -32010",
    steps: [{ connect: "b" }, { on: "b", ...initialize({ resumeSessionId: "<session:a>" }) }, { on: "b", ...initialize() }],
    differs: {
      why: "execmux's -32010 also names the client holding the session and since when, so a user can tell which of their clients it is",
      project: messagesCutAfter("session <uuid-1> is already attached to another connection"),
      assert: (_upstream, execmux) =>
        expect(observationOf(execmux, "b: initialize #2")).toMatchObject({
          error: { message: expect.stringMatching(/^session <uuid-1> is already attached to another connection \(client "codex-environment", attached \d+ s ago\)$/) },
        }),
    },
  },
  {
    name: "resume an unknown session id, then a fresh initialize works",
    handshake: false,
    steps: [initialize({ resumeSessionId: "00000000-0000-4000-8000-000000000000" }), initialize()],
  },
  {
    name: "a resumed session keeps its processes and their output",
    steps: [
      start("p", "echo before; sleep 10"),
      { notification: "process/output", where: { processId: "p" } },
      { disconnect: "a" },
      { connect: "b" },
      { on: "b", handshake: true, resume: "<session:a>" },
      { on: "b", ...read("p") },
      { on: "b", ...terminate("p") },
      { on: "b", ...events("p") },
    ],
    differs: GRACEFUL_TERMINATE,
  },
]);

const environmentInfoSteps = [initialize(), initialized, { request: "environment/info", params: null }];
const capabilitiesOf = (transcript: Observation[]) =>
  (observationOf(transcript, "a: environment/info #2") as { result: { capabilities: Record<string, unknown> } }).result.capabilities;

describeDifferential("environment", [
  {
    name: "environmentInfo in initialize equals environment/info; the same fields as upstream",
    handshake: false,
    environmentInfo: "compare",
    steps: environmentInfoSteps,
    differs: {
      why:
        "capabilities announce optional features a client then uses: execmux claims only those it implements; " +
        "providerId (optional, omitted when None) is upstream's opaque id of its own build, which execmux has no equivalent of and omits; " +
        "sandbox is execmux's extension saying whether a process/start sandbox can be enforced here (README, Sandbox)",
      project: (transcript) =>
        [replacingMember("capabilities", "<capabilities>"), replacingMember("providerId", undefined), replacingMember("sandbox", undefined)].reduce(
          (projected: unknown, projection) => projection(projected as Observation[]),
          transcript,
        ),
      assert: (upstream, execmux) => {
        const [upstreamInfo, execmuxInfo] = [upstream, execmux].map((transcript) => (observationOf(transcript, "a: environment/info #2") as { result: object }).result);
        expect(upstreamInfo).toHaveProperty("providerId");
        expect(upstreamInfo).not.toHaveProperty("sandbox");
        expect(execmuxInfo).not.toHaveProperty("providerId");
        expect(execmuxInfo).toHaveProperty("sandbox.sandboxType");
        for (const transcript of [upstream, execmux]) {
          const fromInitialize = (observationOf(transcript, "a: initialize #1") as { result: { environmentInfo: unknown } }).result.environmentInfo;
          expect(fromInitialize).toEqual((observationOf(transcript, "a: environment/info #2") as { result: unknown }).result);
        }
        const claimed = Object.entries(capabilitiesOf(execmux)).filter(([, value]) => value === true);
        for (const [name] of claimed) {
          // A capability an older upstream (EXECMUX_UPSTREAM_CODEX_VERSION) does not know yet: nothing to compare with.
          if (olderThan(upstreamVersion, "0.171.0") && capabilitiesOf(upstream)[name] === undefined) continue;
          expect(capabilitiesOf(upstream)[name], `execmux claims ${name}`).toBe(true);
        }
        for (const value of Object.values(capabilitiesOf(execmux))) expect(typeof value).toBe("boolean");
      },
    },
  },
  {
    name: "params absent, null or {}",
    steps: [
      { request: "environment/info" },
      { request: "environment/info", params: null },
      { request: "environment/info", params: {} },
      { request: "environment/status" },
      { request: "environment/status", params: null },
      { request: "environment/status", params: {} },
    ],
  },
  {
    name: "params of the wrong type, or an object with members",
    steps: [{ request: "environment/status", params: [1] }, { request: "environment/info", params: "x" }, { request: "environment/status", params: { unknown: 1 } }],
  },
]);

// ---------------------------------------------------------------- processes

describeDifferential("process/start", [
  {
    name: "the exact frame a Codex agent sends in workspace-write mode",
    steps: [{ request: "process/start", params: codexWorkspaceWriteStart }, events(codexWorkspaceWriteStart.processId)],
  },
  {
    name: "the Codex frame with sandbox null runs unsandboxed",
    steps: [{ request: "process/start", params: { ...codexWorkspaceWriteStart, sandbox: null } }, events(codexWorkspaceWriteStart.processId)],
  },
  {
    name: "only the required fields",
    steps: [
      { request: "process/start", params: { processId: "p", argv: ["/bin/sh", "-c", "echo minimal"], cwd: "file://<scratch>", env: ENV, tty: false } },
      events("p"),
    ],
  },
  {
    name: "enforceManagedNetwork true without a sandbox",
    steps: [start("p", "echo fine", { enforceManagedNetwork: true, managedNetwork: { loopbackPorts: [], allowLocalBinding: false } }), events("p")],
  },
  {
    name: "enforceManagedNetwork true without a sandbox or managedNetwork",
    steps: [start("p", "echo fine", { enforceManagedNetwork: true }), events("p")],
  },
  { name: "empty argv", steps: [start("p", "", { argv: [] })] },
  { name: "missing argv", steps: [{ request: "process/start", params: { processId: "p", cwd: "file://<scratch>", env: ENV, tty: false } }] },
  { name: "missing cwd", steps: [{ request: "process/start", params: { processId: "p", argv: ["/bin/true"], env: ENV, tty: false } }] },
  {
    name: "missing env",
    steps: [{ request: "process/start", params: { processId: "p", argv: ["/bin/true"], cwd: "file://<scratch>", tty: false } }],
    differs: lenient(`${LENIENT} an omitted env is an empty one`, "a: process/start #2", "missing field `env`", { processId: "p", sandboxType: "none" }),
  },
  {
    name: "missing tty",
    steps: [{ request: "process/start", params: { processId: "p", argv: ["/bin/true"], cwd: "file://<scratch>", env: ENV } }],
    differs: lenient(`${LENIENT} an omitted tty is false`, "a: process/start #2", "missing field `tty`", { processId: "p", sandboxType: "none" }),
  },
  { name: "missing processId", steps: [{ request: "process/start", params: { argv: ["/bin/true"], cwd: "file://<scratch>", env: ENV, tty: false } }] },
  {
    name: "a native path as cwd",
    steps: [start("p", "pwd", { cwd: "<scratch>" }), events("p")],
    differs: {
      why: "execmux accepts a native absolute cwd as well as a file URI: clients of the earlier protocol (PathUri before it refused native paths) send one",
      assert: (upstream, execmux) => {
        expect(observationOf(upstream, "a: process/start #2")).toMatchObject({ error: { code: -32602, message: "invalid URI: relative URL without a base" } });
        expect(observationOf(execmux, "a: process/start #2")).toMatchObject({ result: { processId: "p" } });
        const { output } = observationOf(execmux, "a: events of p") as { output: { params: { chunk: string } }[] };
        expect(output.map((event) => event.params.chunk)).toEqual(["text:<scratch>\n"]);
      },
    },
  },
  {
    name: "a cwd that does not exist",
    steps: [start("p", "pwd", { cwd: "file://<scratch>/missing" }), start("q", "pwd", { cwd: "file://<scratch>/missing/deeper" })],
    differs: {
      why: "execmux names the missing working directory after upstream's OS error: upstream's message is the same as for a missing program, and a client (execmux's CLI) cannot tell them apart",
      project: messagesCutAfter("No such file or directory (os error 2)"),
      assert: (_upstream, execmux) =>
        expect(observationOf(execmux, "a: process/start #2")).toMatchObject({
          error: { code: -32603, message: "No such file or directory (os error 2): working directory <scratch>/missing" },
        }),
    },
  },
  {
    name: "a sandbox whose permission path is no path on this host",
    steps: [
      start("p", "true", {
        sandbox: {
          ...codexWorkspaceWriteStart.sandbox,
          permissions: readsDisk({ path: { type: "path", path: "file:///C:/x" }, access: "write" }),
        },
      }),
    ],
    differs: {
      why: "the sandbox refusal's words are execmux's (which entry, and why); its code and data.kind are upstream's",
      project: replacingMember("message", "<sandbox refusal>"),
      assert: (upstream, execmux) => {
        expect(observationOf(upstream, "a: process/start #2")).toMatchObject({
          error: { message: "failed to prepare process sandbox: invalid sandbox permission path: 'file:///C:/x' is invalid on 'linux'" },
        });
        expect(observationOf(execmux, "a: process/start #2")).toMatchObject({
          error: { message: expect.stringContaining("'file:///C:/x' is invalid on 'linux'") },
        });
      },
    },
  },
  { name: "a cwd URI of another scheme", steps: [start("p", "pwd", { cwd: "http://host/x" })] },
  { name: "a Windows cwd URI", steps: [start("p", "pwd", { cwd: "file:///C:/Windows" })] },
  { name: "a program that does not exist", steps: [start("p", "", { argv: ["/nonexistent/program"] })] },
  { name: "a program not found on PATH", steps: [start("p", "", { argv: ["execmux-no-such-program"] })] },
  { name: "a program that is not executable", files: { "plain.sh": "echo hi\n" }, steps: [start("p", "", { argv: ["<scratch>/plain.sh"] })] },
  {
    name: "a program found on PATH that is not executable",
    files: { "bin/plain": "echo hi\n" },
    steps: [start("p", "", { argv: ["plain"], env: { PATH: "<scratch>/bin" } })],
  },
  { name: "a program that is a directory", files: { dir: { directory: true } }, steps: [start("p", "", { argv: ["<scratch>/dir"] })] },
  { name: "a program under a file", files: { file: "x" }, steps: [start("p", "", { argv: ["<scratch>/file/program"] })] },
  {
    name: "a cwd that is a file",
    files: { file: "x" },
    steps: [start("p", "pwd", { cwd: "file://<scratch>/file" })],
    differs: {
      why: "execmux names the working directory after upstream's OS error (as for a missing one)",
      project: messagesCutAfter("Not a directory (os error 20)"),
      assert: (_upstream, execmux) =>
        expect(observationOf(execmux, "a: process/start #2")).toMatchObject({
          error: { code: -32603, message: "Not a directory (os error 20): working directory <scratch>/file" },
        }),
    },
  },
  {
    name: "a program that is not a valid executable (a bad ELF)",
    files: { "bad-elf": { executable: "\u007fELF not really" } },
    steps: [start("p", "", { argv: ["<scratch>/bad-elf"] }), events("p")],
  },
  {
    name: "an executable script without a #! line",
    files: { "no-shebang": { executable: "echo ran-by-sh\n" } },
    steps: [start("p", "", { argv: ["<scratch>/no-shebang"] }), events("p")],
  },
  { name: "a program found on PATH", steps: [start("p", "", { argv: ["echo", "from-path"] }), events("p")] },
  {
    name: "a duplicate processId while the first runs",
    steps: [start("p", LONG), start("p", "echo second"), terminate("p"), events("p")],
    differs: GRACEFUL_TERMINATE,
  },
  {
    name: "a duplicate processId after the first closed",
    steps: [start("p", "echo first"), events("p"), start("p", "echo second")],
  },
  {
    name: "metadata with a threadId that is not a UUID",
    steps: [start("p", "echo x", { metadata: { threadId: "not-a-uuid", toolCallId: "call_1" } })],
    differs: lenient(
      `${LENIENT} metadata is telemetry that execmux ignores, so its threadId need not be a UUID`,
      "a: process/start #2",
      "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1",
      { processId: "p", sandboxType: "none" },
    ),
  },
  {
    name: "envPolicy null gives the child exactly env",
    steps: [start("p", "env | sort", { env: { ...ENV, ONLY_THIS: "1" } }), events("p")],
  },
  {
    name: "envPolicy inherit none with set and env overlay",
    steps: [
      start("p", "env | sort", {
        envPolicy: { inherit: "none", ignoreDefaultExcludes: false, exclude: [], set: { FROM_SET: "s", OVERLAID: "set" }, includeOnly: [] },
        env: { ...ENV, OVERLAID: "env" },
      }),
      events("p"),
    ],
  },
  {
    name: "envPolicy missing a sub-field",
    steps: [start("p", "true", { envPolicy: { inherit: "none" } })],
    differs: lenient(
      `${LENIENT} envPolicy may give inherit alone, its other sub-fields default to false and empty`,
      "a: process/start #2",
      "missing field `ignoreDefaultExcludes`",
      { processId: "p", sandboxType: "none" },
    ),
  },
  {
    name: "arg0 names the program for the child",
    steps: [start("p", "", { argv: ["/bin/sh", "-c", 'echo "$0"'], arg0: "custom-name" }), events("p")],
  },
  {
    name: "tty true streams pty output",
    steps: [start("p", "printf 'in a pty: '; test -t 1 && echo yes", { tty: true }), events("p")],
  },
]);

describeDifferential("notifications", [
  {
    name: "stdout, stderr, exited with its code, closed, in seq order",
    steps: [start("p", "printf out; sleep 0.1; printf err >&2; exit 7"), events("p")],
  },
  {
    name: "exit by a signal",
    steps: [start("p", "kill -9 $$"), events("p")],
  },
  {
    name: "output after exited, before closed",
    steps: [start("p", "(sleep 0.3; echo late) & echo early"), events("p")],
  },
  {
    name: "a large output arrives whole",
    steps: [
      start("p", "head -c 300000 /dev/zero | tr '\\0' a; echo"),
      events("p"),
      { ...read("p"), mergeChunks: true },
    ],
  },
]);

// Cases that compare exact seqs let the child pause after its output: which of the last output and the
// exit takes the lower seq is otherwise a race, in upstream too (DIFFERENTIAL_SELF_CHECK showed it).
const OUTPUT_SETTLES = "sleep 0.2";

describeDifferential("process/read", [
  {
    name: "after close: every field",
    steps: [start("p", `printf out; ${OUTPUT_SETTLES}; exit 3`), events("p"), read("p")],
  },
  {
    name: "explicit nulls for afterSeq, maxBytes and waitMs",
    steps: [start("p", `printf out; ${OUTPUT_SETTLES}`), events("p"), read("p", { afterSeq: null, maxBytes: null, waitMs: null })],
  },
  {
    name: "afterSeq skips what was seen, and past the end",
    steps: [
      start("p", `printf out; ${OUTPUT_SETTLES}; exit 3`),
      events("p"),
      read("p", { afterSeq: 1 }),
      read("p", { afterSeq: 3 }),
      read("p", { afterSeq: 100 }),
    ],
  },
  {
    name: "maxBytes: at least one chunk, then stop once reached; nextSeq follows the last chunk",
    steps: [
      start("p", `printf aaaa; ${OUTPUT_SETTLES}; printf bbbb; ${OUTPUT_SETTLES}; printf cccc; ${OUTPUT_SETTLES}`),
      events("p"),
      read("p", { maxBytes: 1 }),
      read("p", { afterSeq: 1, maxBytes: 5 }),
      read("p", { afterSeq: 3, maxBytes: 5 }),
      read("p", { maxBytes: 0 }),
    ],
  },
  {
    name: "waitMs: a long poll returns when output arrives",
    steps: [start("p", "sleep 0.3; printf late; sleep 10"), read("p", { waitMs: 10_000 }), terminate("p"), events("p")],
    differs: GRACEFUL_TERMINATE,
  },
  {
    name: "waitMs: a long poll with nothing to say returns empty",
    steps: [start("p", LONG), read("p", { waitMs: 100 }), terminate("p"), events("p")],
    differs: GRACEFUL_TERMINATE,
  },
  {
    name: "a tty process reads as pty",
    steps: [start("p", "printf hi", { tty: true }), events("p"), { ...read("p"), mergeChunks: true }],
  },
  { name: "an unknown process id", steps: [read("nope")] },
  { name: "without processId", steps: [{ request: "process/read", params: {} }] },
  { name: "afterSeq of the wrong type", steps: [start("p", "true"), events("p"), read("p", { afterSeq: "1" }), read("p", { afterSeq: -1 })] },
]);

describeDifferential("process/write", [
  {
    name: "writeId is required",
    steps: [start("p", "head -c 6", { pipeStdin: true }), write("p", "abc"), terminate("p"), events("p")],
    differs: combined(
      lenient(`${LENIENT} a write without writeId is simply not deduplicated`, "a: process/write #3", "missing field `writeId`", { status: "accepted" }),
      GRACEFUL_TERMINATE,
    ),
  },
  {
    name: "a repeated writeId is accepted and written once",
    steps: [start("p", "head -c 6", { pipeStdin: true }), write("p", "abc", "w1"), write("p", "abc", "w1"), write("p", "def", "w2"), events("p")],
  },
  {
    name: "an empty writeId",
    steps: [start("p", "head -c 6", { pipeStdin: true }), write("p", "abc", ""), terminate("p"), events("p")],
    differs: GRACEFUL_TERMINATE,
  },
  {
    name: "stdinClosed without pipeStdin",
    steps: [start("p", LONG), write("p", "abc", "w1"), terminate("p"), events("p")],
    differs: GRACEFUL_TERMINATE,
  },
  {
    name: "stdinClosed when pipeStdin is omitted",
    steps: [
      { request: "process/start", params: { processId: "p", argv: ["/bin/sh", "-c", LONG], cwd: "file://<scratch>", env: ENV, tty: false } },
      write("p", "abc", "w1"),
      terminate("p"),
      events("p"),
    ],
    differs: GRACEFUL_TERMINATE,
  },
  { name: "unknownProcess", steps: [write("nope", "abc", "w1")] },
  {
    name: "after the process exited",
    steps: [start("p", "true", { pipeStdin: true }), events("p"), write("p", "abc", "w1")],
    differs: stepDiffers(
      "a pipe stdin closes when the direct child exits (Node closes it), so execmux answers a later write stdinClosed (README, Differences); upstream accepts it",
      "a: process/write #3",
      { upstream: { result: { status: "accepted" } }, execmux: { result: { status: "stdinClosed" } } },
    ),
  },
  {
    name: "a tty echoes what is written",
    steps: [start("p", "head -n 1", { tty: true }), write("p", "hi\n", "w1"), events("p")],
  },
  {
    name: "a chunk that is not base64",
    steps: [
      start("p", "head -c 6", { pipeStdin: true }),
      { request: "process/write", params: { processId: "p", chunk: "!!not base64!!", writeId: "w1" } },
      terminate("p"),
      events("p"),
    ],
    differs: GRACEFUL_TERMINATE,
  },
]);

describeDifferential("process/signal", [
  {
    name: "interrupt reaches a process that traps it",
    steps: [
      start("p", "trap 'echo trapped; exit 7' INT; echo ready; while :; do sleep 0.05; done"),
      { notification: "process/output", where: { processId: "p" } },
      { request: "process/signal", params: { processId: "p", signal: "interrupt" } },
      events("p"),
    ],
  },
  {
    name: "interrupt ends a process that does not trap it",
    steps: [
      start("p", "echo ready; exec sleep 10"),
      { notification: "process/output", where: { processId: "p" } },
      { request: "process/signal", params: { processId: "p", signal: "interrupt" } },
      events("p"),
    ],
  },
  {
    name: "an unknown signal variant",
    steps: [start("p", LONG), { request: "process/signal", params: { processId: "p", signal: "no-such-signal" } }, terminate("p"), events("p")],
    differs: GRACEFUL_TERMINATE,
  },
  {
    name: "kill, a name only execmux knows",
    // The terminate is upstream's cleanup: its result depends on whether the kill was reaped yet.
    steps: [start("p", LONG), { request: "process/signal", params: { processId: "p", signal: "kill" } }, terminate("p"), events("p")],
    differs: {
      why: "execmux also takes POSIX signal names and the aliases terminate, kill, hangup and quit (shared/src/signals.ts); upstream knows only interrupt",
      assert: (upstream, execmux) => {
        expect(observationOf(upstream, "a: process/signal #3")).toMatchObject({ error: { code: -32602, message: "unknown variant `kill`, expected `interrupt`" } });
        expect(observationOf(execmux, "a: process/signal #3")).toMatchObject({ result: {} });
        const { notifications } = observationOf(execmux, "a: events of p") as { notifications: { method: string; params: { exitCode?: number } }[] };
        expect(notifications.find((event) => event.method === "process/exited")?.params.exitCode).toBe(137);
      },
    },
  },
  { name: "an unknown process", steps: [{ request: "process/signal", params: { processId: "nope", signal: "interrupt" } }] },
  {
    name: "a process that already exited",
    steps: [start("p", "true"), events("p"), { request: "process/signal", params: { processId: "p", signal: "interrupt" } }],
  },
  { name: "without a signal", steps: [{ request: "process/signal", params: { processId: "nope" } }] },
]);

describeDifferential("process/terminate", [
  {
    name: "a running process: running true, then exited and closed",
    steps: [start("p", LONG), terminate("p"), events("p"), read("p")],
    differs: GRACEFUL_TERMINATE,
  },
  {
    name: "twice: the second finds it no longer running",
    steps: [start("p", LONG), terminate("p"), events("p"), terminate("p")],
    differs: GRACEFUL_TERMINATE,
  },
  { name: "an exited process: running false", steps: [start("p", "true"), events("p"), terminate("p")] },
  { name: "an unknown process: running false", steps: [terminate("nope")] },
  { name: "without processId", steps: [{ request: "process/terminate", params: {} }] },
]);

// ---------------------------------------------------------------- filesystem

const TREE = {
  "a.txt": "alpha",
  "dir/b.txt": "beta",
  "dir/sub/c.txt": "gamma",
  "dir/.hidden/d.txt": "delta",
  "link-to-a": { symlink: "a.txt" },
  "link-to-dir": { symlink: "dir" },
  "broken-link": { symlink: "missing" },
  fifo: { fifo: true },
} as const;
/** Every createdAtMs, both sides: the member is still required, its value is the host's. */
const BIRTH_TIME: Deviation = {
  why:
    "createdAtMs is the file's birth time wherever the filesystem keeps one (statx btime); upstream's musl build reports 0 " +
    "when it follows symlinks (README, Differences from upstream); every other member is compared",
  project: replacingMember("createdAtMs", "<birth time or 0>"),
  assert: (upstream, execmux) => {
    const createdAt = (transcript: Observation[]) =>
      JSON.stringify(transcript).match(/"createdAtMs":("<time>"|-?\d+)/g)?.map((member) => member.slice("\"createdAtMs\":".length)) ?? [];
    expect(createdAt(upstream).every((value) => value === "0")).toBe(true);
    // A real clock reading (normalized to <time>) or 0 where the filesystem keeps no birth time; never anything else.
    expect(createdAt(execmux).every((value) => value === '"<time>"' || value === "0")).toBe(true);
    expect(createdAt(execmux)).toHaveLength(createdAt(upstream).length);
  },
};

/** fs/readFile's refusal of a file over the cap: the same code and words, each server's own limit. */
const READ_FILE_CAP: Deviation = {
  why:
    "execmux caps fs/readFile at 12 MB (a whole file in one JSON frame, base64-inflated, held per connection), upstream at " +
    "512 MiB (README, Filesystem); the refusal is the same -32600 in the same words but for the limit",
  project: (transcript) =>
    JSON.parse(JSON.stringify(transcript).replace(/file is too large to read: limit is \d+ bytes/g, "file is too large to read: limit is <cap> bytes")),
  assert: (upstream, execmux) => {
    expect(JSON.stringify(upstream)).toContain("file is too large to read: limit is 536870912 bytes");
    expect(JSON.stringify(execmux)).toContain("file is too large to read: limit is 12000000 bytes");
  },
};

const walkOptions = (extra: Record<string, unknown> = {}) => ({ maxDepth: 8, maxDirectories: 100, maxEntries: 100, followDirectorySymlinks: false, ...extra });

describeDifferential("fs/readFile", [
  { name: "a file", files: TREE, steps: [fs("readFile", { path: uri("a.txt") })] },
  { name: "NUL and non-ASCII content", files: { bin: "\u0000\u00ff" }, steps: [fs("readFile", { path: uri("bin") })] },
  { name: "through a symlink, and with followSymlinks false", files: TREE, steps: [fs("readFile", { path: uri("link-to-a") }), fs("readFile", { path: uri("link-to-a"), followSymlinks: false })] },
  { name: "a missing file is -32004", steps: [fs("readFile", { path: uri("missing") })] },
  { name: "a directory", files: TREE, steps: [fs("readFile", { path: uri("dir") })] },
  { name: "a FIFO is not a file (and no writer is awaited)", files: TREE, steps: [fs("readFile", { path: uri("fifo") })] },
  { name: "a file over 512 MiB", files: { big: { sparseBytes: 536_870_913 } }, steps: [fs("readFile", { path: uri("big") })], differs: READ_FILE_CAP },
  { name: "sandbox null and absent", files: TREE, steps: [fs("readFile", { path: uri("a.txt"), sandbox: null })] },
  { name: "without path", steps: [fs("readFile", {})] },
]);

describeDifferential("fs/writeFile", [
  {
    name: "writes and overwrites",
    files: TREE,
    snapshot: true,
    steps: [
      fs("writeFile", { path: uri("new.txt"), dataBase64: Buffer.from("fresh").toString("base64") }),
      fs("writeFile", { path: uri("a.txt"), dataBase64: Buffer.from("replaced").toString("base64") }),
    ],
  },
  { name: "a missing parent is -32004", snapshot: true, steps: [fs("writeFile", { path: uri("no/such/dir/x.txt"), dataBase64: "" })] },
  { name: "dataBase64 that is not base64", snapshot: true, steps: [fs("writeFile", { path: uri("x.txt"), dataBase64: "!!!" })] },
  { name: "onto a directory", files: TREE, steps: [fs("writeFile", { path: uri("dir"), dataBase64: "" })] },
  { name: "through a symlink", files: TREE, snapshot: true, steps: [fs("writeFile", { path: uri("link-to-a"), dataBase64: Buffer.from("via link").toString("base64") })] },
  { name: "without dataBase64", steps: [fs("writeFile", { path: uri("x.txt") })] },
]);

describeDifferential("fs/createDirectory", [
  { name: "nested, recursive by default", snapshot: true, steps: [fs("createDirectory", { path: uri("x/y/z") })] },
  { name: "recursive null means true", snapshot: true, steps: [fs("createDirectory", { path: uri("x/y"), recursive: null })] },
  { name: "not recursive with a missing parent", snapshot: true, steps: [fs("createDirectory", { path: uri("x/y"), recursive: false })] },
  { name: "an existing directory, recursive and not", files: TREE, steps: [fs("createDirectory", { path: uri("dir"), recursive: true }), fs("createDirectory", { path: uri("dir"), recursive: false })] },
  { name: "over an existing file", files: TREE, steps: [fs("createDirectory", { path: uri("a.txt"), recursive: true })] },
]);

describeDifferential("fs/getMetadata", [
  { name: "a file and a directory", files: TREE, steps: [fs("getMetadata", { path: uri("a.txt") }), fs("getMetadata", { path: uri("dir") })], differs: BIRTH_TIME },
  {
    name: "a symlink, followed and not",
    files: TREE,
    steps: [fs("getMetadata", { path: uri("link-to-a") }), fs("getMetadata", { path: uri("link-to-a"), followSymlinks: false }), fs("getMetadata", { path: uri("broken-link"), followSymlinks: false })],
    differs: BIRTH_TIME,
  },
  { name: "a FIFO", files: TREE, steps: [fs("getMetadata", { path: uri("fifo") })], differs: BIRTH_TIME },
  { name: "a missing path is -32004", steps: [fs("getMetadata", { path: uri("missing") }), fs("getMetadata", { path: uri("broken-link") })] },
]);

describeDifferential("fs/canonicalize", [
  {
    name: "symlinks and dot segments resolve",
    files: TREE,
    steps: [fs("canonicalize", { path: uri("link-to-dir/sub/../b.txt") }), fs("canonicalize", { path: uri("dir/./sub") })],
  },
  { name: "a missing path is -32004", steps: [fs("canonicalize", { path: uri("missing/x") })] },
  { name: "a name that needs percent-encoding comes back encoded", files: { "a b#c%d?.txt": "x" }, steps: [fs("canonicalize", { path: uri("a%20b%23c%25d%3F.txt") })] },
]);

describeDifferential("fs/readDirectory", [
  { name: "entries (compared sorted); a broken symlink is skipped", files: TREE, steps: [fs("readDirectory", { path: uri("") })] },
  { name: "a file", files: TREE, steps: [fs("readDirectory", { path: uri("a.txt") })] },
  { name: "a missing directory is -32004", steps: [fs("readDirectory", { path: uri("missing") })] },
]);

describeDifferential("fs/walk", [
  { name: "a bounded tree, breadth-first and sorted", files: TREE, steps: [fs("walk", { path: uri(""), options: walkOptions() })] },
  { name: "following directory symlinks", files: TREE, steps: [fs("walk", { path: uri("link-to-dir"), options: walkOptions({ followDirectorySymlinks: true }) }), fs("walk", { path: uri(""), options: walkOptions({ followDirectorySymlinks: true }) })] },
  { name: "pruneHiddenDirectories lists but does not descend", files: TREE, steps: [fs("walk", { path: uri("dir"), options: walkOptions({ pruneHiddenDirectories: true }) })] },
  { name: "maxDepth 1", files: TREE, steps: [fs("walk", { path: uri(""), options: walkOptions({ maxDepth: 1 }) })] },
  { name: "maxEntries and maxDirectories truncate", files: TREE, steps: [fs("walk", { path: uri(""), options: walkOptions({ maxEntries: 2 }) }), fs("walk", { path: uri(""), options: walkOptions({ maxDirectories: 1 }) })] },
  {
    name: "zero limits",
    files: TREE,
    steps: [
      fs("walk", { path: uri(""), options: walkOptions({ maxDepth: 0 }) }),
      fs("walk", { path: uri(""), options: walkOptions({ maxDirectories: 0 }) }),
      fs("walk", { path: uri(""), options: walkOptions({ maxEntries: 0 }) }),
    ],
  },
  {
    name: "limits over the maximums, checked before the root",
    steps: [
      fs("walk", { path: uri("missing"), options: walkOptions({ maxDepth: 65 }) }),
      fs("walk", { path: uri("missing"), options: walkOptions({ maxDirectories: 10_001 }) }),
      fs("walk", { path: uri("missing"), options: walkOptions({ maxEntries: 50_001 }) }),
    ],
  },
  { name: "a missing root is -32004", steps: [fs("walk", { path: uri("missing"), options: walkOptions() })] },
  { name: "a root that is a file", files: TREE, steps: [fs("walk", { path: uri("a.txt"), options: walkOptions() })] },
  { name: "without options", files: TREE, steps: [fs("walk", { path: uri("") })] },
]);

describeDifferential("fs/remove", [
  { name: "a file", files: TREE, snapshot: true, steps: [fs("remove", { path: uri("a.txt") })] },
  { name: "a directory, recursive by default", files: TREE, snapshot: true, steps: [fs("remove", { path: uri("dir") })] },
  { name: "a non-empty directory, not recursive", files: TREE, snapshot: true, steps: [fs("remove", { path: uri("dir"), recursive: false })] },
  { name: "a symlink removes the link, not the target", files: TREE, snapshot: true, steps: [fs("remove", { path: uri("link-to-dir") })] },
  { name: "a missing path: fine with force (the default), -32004 without", steps: [fs("remove", { path: uri("missing") }), fs("remove", { path: uri("missing"), force: false })] },
]);

/**
 * A restricted profile like Codex's workspace-write, with `proj` the only writable root (the scratch
 * directory itself lies under /tmp, which Codex's own profile would make writable): both servers run
 * these writes inside a sandbox, and refuse the escapes with the kernel's EROFS in the same words.
 */
const projectOnlySandbox = {
  permissions: readsDisk(
    { path: { type: "path", path: "file://<scratch>/proj" }, access: "write" },
    { path: { type: "path", path: "file://<scratch>/proj/.git" }, access: "read", missing_path_behavior: "skip" },
  ),
  policyContext: { cwd: "file://<scratch>/proj", workspaceRoots: ["file://<scratch>/proj"] },
  windowsSandboxLevel: "disabled",
  useLegacyLandlock: false,
};
const SANDBOXED_TREE = {
  "proj/a.txt": "a",
  "proj/.git/config": "[core]",
  "proj/planted": { symlink: "<scratch>/outside" },
  "outside/o.txt": "o",
} as const;
const inSandbox = (method: string, params: Record<string, unknown>) => fs(method, { ...params, sandbox: projectOnlySandbox });
const text = (value: string) => Buffer.from(value).toString("base64");

describeDifferential("fs/* writes under a restricted profile", [
  {
    name: "inside the writable root they work",
    files: SANDBOXED_TREE,
    snapshot: true,
    steps: [
      inSandbox("writeFile", { path: uri("proj/new.txt"), dataBase64: text("new") }),
      inSandbox("createDirectory", { path: uri("proj/d/e"), recursive: true }),
      inSandbox("copy", { sourcePath: uri("outside/o.txt"), destinationPath: uri("proj/d/o.txt"), recursive: false }),
      inSandbox("remove", { path: uri("proj/a.txt") }),
      inSandbox("writeFile", { path: uri("proj/no/such.txt"), dataBase64: text("x") }),
    ],
  },
  {
    name: "outside it, through a planted symlink and into .git they fail with EROFS",
    files: SANDBOXED_TREE,
    snapshot: true,
    steps: [
      inSandbox("writeFile", { path: uri("outside/x.txt"), dataBase64: text("x") }),
      inSandbox("writeFile", { path: uri("proj/planted/x.txt"), dataBase64: text("x") }),
      inSandbox("writeFile", { path: uri("proj/.git/config"), dataBase64: text("x") }),
      inSandbox("createDirectory", { path: uri("outside/d"), recursive: true }),
      inSandbox("createDirectory", { path: uri("proj/.git/hooks"), recursive: false }),
      inSandbox("remove", { path: uri("outside/o.txt") }),
      inSandbox("remove", { path: uri("proj/.git") }),
      inSandbox("copy", { sourcePath: uri("proj/a.txt"), destinationPath: uri("proj/planted/c.txt"), recursive: false }),
    ],
  },
  {
    name: "a context without windowsSandboxLevel",
    files: SANDBOXED_TREE,
    steps: [fs("writeFile", { path: uri("proj/x.txt"), dataBase64: "", sandbox: { ...projectOnlySandbox, windowsSandboxLevel: undefined } })],
  },
]);

describeDifferential("fs/copy", [
  { name: "a file", files: TREE, snapshot: true, steps: [fs("copy", { sourcePath: uri("a.txt"), destinationPath: uri("copy.txt"), recursive: false })] },
  { name: "a directory, recursively", files: TREE, snapshot: true, steps: [fs("copy", { sourcePath: uri("dir"), destinationPath: uri("copy"), recursive: true })] },
  { name: "a directory without recursive", files: TREE, snapshot: true, steps: [fs("copy", { sourcePath: uri("dir"), destinationPath: uri("copy"), recursive: false })] },
  { name: "a directory into its own descendant", files: TREE, snapshot: true, steps: [fs("copy", { sourcePath: uri("dir"), destinationPath: uri("dir/sub/copy"), recursive: true }), fs("copy", { sourcePath: uri("dir"), destinationPath: uri("dir"), recursive: true })] },
  { name: "a symlink is copied as a symlink", files: TREE, snapshot: true, steps: [fs("copy", { sourcePath: uri("link-to-a"), destinationPath: uri("link-copy"), recursive: false })] },
  { name: "a FIFO is not copied", files: TREE, snapshot: true, steps: [fs("copy", { sourcePath: uri("fifo"), destinationPath: uri("fifo-copy"), recursive: false })] },
  { name: "a missing source is -32004", steps: [fs("copy", { sourcePath: uri("missing"), destinationPath: uri("x"), recursive: false })] },
  { name: "recursive is required", files: TREE, steps: [fs("copy", { sourcePath: uri("a.txt"), destinationPath: uri("x") })] },
]);

const DIGITS = { "digits.txt": "0123456789" };

describeDifferential("fs/open, readBlock, close", [
  {
    name: "non-sequential offsets and lengths; EOF does not close",
    files: DIGITS,
    steps: [open("h", "digits.txt"), readBlock("h", 6, 3), readBlock("h", 1, 2), readBlock("h", 8, 4), readBlock("h", 0, 2), readBlock("h", 20, 1), fs("close", { handleId: "h" })],
  },
  {
    name: "a stream that ends on an exact block boundary",
    files: { "four.txt": "abcd" },
    steps: [open("h", "four.txt"), readBlock("h", 0, 4), readBlock("h", 4, 4), fs("close", { handleId: "h" })],
  },
  {
    name: "close is idempotent; a closed handle is unknown (-32004)",
    files: DIGITS,
    steps: [open("h", "digits.txt"), fs("close", { handleId: "h" }), fs("close", { handleId: "h" }), readBlock("h", 0, 1), fs("close", { handleId: "never-opened" })],
  },
  {
    name: "len limits",
    files: DIGITS,
    steps: [open("h", "digits.txt"), readBlock("h", 0, 0), readBlock("h", 0, 1_048_577), readBlock("h", 0, 1_048_576), fs("close", { handleId: "h" })],
  },
  {
    name: "handle ids: over 32 bytes, exactly 32, a duplicate",
    files: DIGITS,
    steps: [open("h".repeat(33), "digits.txt"), open("h".repeat(32), "digits.txt"), open("h".repeat(32), "digits.txt"), fs("close", { handleId: "h".repeat(33) })],
  },
  { name: "a FIFO is not a file", files: TREE, steps: [open("h", "fifo")] },
  { name: "a directory", files: TREE, steps: [open("h", "dir")] },
  { name: "a missing file is -32004", steps: [open("h", "missing")] },
  {
    name: "at most 128 open per connection; close frees one",
    files: DIGITS,
    steps: [
      ...Array.from({ length: 128 }, (_, index) => open(`h${index}`, "digits.txt")),
      open("one-too-many", "digits.txt"),
      fs("close", { handleId: "h0" }),
      open("one-too-many", "digits.txt"),
    ],
  },
  {
    name: "the open file is read after its path is replaced",
    files: DIGITS,
    steps: [open("h", "digits.txt"), fs("remove", { path: uri("digits.txt") }), fs("writeFile", { path: uri("digits.txt"), dataBase64: Buffer.from("replaced").toString("base64") }), readBlock("h", 0, 10)],
  },
  { name: "an unknown handle is -32004", steps: [readBlock("nope", 0, 1)] },
]);

describeDifferential("path URIs", [
  { name: "another scheme", steps: [fs("getMetadata", { path: "http://example.com/x" })] },
  { name: "a query", steps: [fs("getMetadata", { path: "file:///tmp?x=1" })] },
  { name: "a fragment", steps: [fs("getMetadata", { path: "file:///tmp#part" })] },
  { name: "credentials", steps: [fs("getMetadata", { path: "file://user:secret@localhost/tmp" })] },
  { name: "a port", steps: [fs("getMetadata", { path: "file://localhost:8080/tmp" })] },
  { name: "file://localhost is the local host", files: TREE, steps: [fs("readFile", { path: "file://localhost<scratch>/a.txt" }), fs("canonicalize", { path: "file://localhost<scratch>/a.txt" })] },
  { name: "another host is a UNC path, not valid here", steps: [fs("getMetadata", { path: "file://server/share/x" })] },
  { name: "percent-decoding", files: { "a b#c.txt": "spaced" }, steps: [fs("readFile", { path: uri("a%20b%23c.txt") }), fs("readFile", { path: uri("a b%23c.txt") })] },
  { name: "an encoded NUL", steps: [fs("getMetadata", { path: uri("a%00b") })] },
  {
    name: "a native absolute path",
    files: TREE,
    steps: [fs("getMetadata", { path: "<scratch>/a.txt" }), fs("getMetadata", { path: uri("a.txt") })],
    differs: {
      why:
        "execmux accepts a native absolute path beside a file: URI (README, Differences from upstream); upstream refuses it " +
        "as a URI without a scheme. The file: URI step is compared as usual; execmux's native answer must be the same as its URI answer",
      project: (transcript) => (BIRTH_TIME.project!(transcript) as Observation[]).filter((observation) => observation.step !== "a: fs/getMetadata #2"),
      assert: (upstream, execmux) => {
        expect(observationOf(upstream, "a: fs/getMetadata #2")).toEqual({ id: 2, error: { code: -32602, message: "invalid URI: relative URL without a base" } });
        const { id: _native, ...nativeAnswer } = observationOf(execmux, "a: fs/getMetadata #2") as Record<string, unknown>;
        const { id: _uri, ...uriAnswer } = observationOf(execmux, "a: fs/getMetadata #3") as Record<string, unknown>;
        expect(nativeAnswer).toEqual(uriAnswer);
        expect((nativeAnswer["result"] as Record<string, unknown> | undefined)?.["isFile"]).toBe(true);
      },
    },
  },
  { name: "a relative path", steps: [fs("getMetadata", { path: "tmp/x" }), fs("getMetadata", { path: "file:tmp" })] },
  { name: "a Windows path", steps: [fs("getMetadata", { path: "file:///C:/Windows" })] },
]);

// ---------------------------------------------------------------- http

const httpTarget = new HttpTarget();
/** After `http/request failed: ` comes reqwest's description of the failure. */
const HTTP_CLIENT_ERROR: Deviation = {
  why:
    "the text after the prefix is reqwest's error description, which upstream's own test leaves unchecked and which varies " +
    "between runs of upstream itself (the same timeout read `route-aware request timed out` or `error sending request for url (…)`)",
  project: messagesCutAfter("http/request failed: "),
};
describeDifferential(
  "http/request",
  [
    { name: "a buffered GET", steps: [http("r", "/hello")] },
    {
      name: "POST with a body and repeated headers, in order",
      steps: [
        http("r", "/echo", {
          method: "POST",
          headers: [
            { name: "x-one", value: "1" },
            { name: "x-repeated", value: "a" },
            { name: "x-repeated", value: "b" },
            { name: "content-type", value: "text/plain" },
          ],
          bodyBase64: Buffer.from("the body").toString("base64"),
        }),
      ],
    },
    { name: "a 404 is a result, not an error", steps: [http("r", "/missing")] },
    { name: "a 204 with no body", steps: [http("r", "/empty")] },
    { name: "redirects are followed by default", steps: [http("r", "/redirect")] },
    { name: "redirectPolicy stop returns the 302", steps: [http("r", "/redirect", { redirectPolicy: "stop" })] },
    { name: "timeoutMs null and absent mean no timeout", steps: [http("r", "/hello", { timeoutMs: null })] },
    { name: "a response slower than timeoutMs is -32603", steps: [http("r", "/hang", { timeoutMs: 50 })], differs: HTTP_CLIENT_ERROR },
    {
      name: "a refused connection is -32603",
      steps: [{ request: "http/request", params: { method: "GET", url: "http://127.0.0.1:1/", requestId: "r" } }],
      differs: HTTP_CLIENT_ERROR,
    },
    {
      name: "streamed: the response first, then contiguous deltas, then done",
      steps: [http("r", "/stream", { streamResponse: true }), { httpBody: "r", replyId: 2 }],
    },
    {
      name: "streamed with an empty body",
      steps: [http("r", "/empty", { streamResponse: true }), { httpBody: "r", replyId: 2 }],
    },
    {
      name: "a stream requestId is reserved until its done frame",
      steps: [
        http("r", "/hold/reserved", { streamResponse: true }),
        http("r", "/hello", { streamResponse: true }),
        http("r", "/hello"),
        http("other", "/release/reserved"),
        { httpBody: "r", replyId: 2 },
        http("r", "/hello", { streamResponse: true }),
        { httpBody: "r", replyId: 6 },
      ],
    },
    { name: "a scheme other than http(s)", steps: [{ request: "http/request", params: { method: "GET", url: "ftp://127.0.0.1/x", requestId: "r" } }] },
    { name: "a URL that does not parse", steps: [{ request: "http/request", params: { method: "GET", url: "not a url", requestId: "r" } }] },
    { name: "a method that is not a token", steps: [http("r", "/hello", { method: "GE T" })] },
    { name: "a header name that is not a token", steps: [http("r", "/hello", { headers: [{ name: "bad name", value: "x" }] })] },
    { name: "a header value with a newline", steps: [http("r", "/hello", { headers: [{ name: "x-bad", value: "a\nb" }] })] },
    { name: "bodyBase64 that is not base64", steps: [http("r", "/echo", { method: "POST", bodyBase64: "!!!" })] },
    { name: "without requestId", steps: [{ request: "http/request", params: { method: "GET", url: "<http>/hello" } }] },
    { name: "an unknown redirectPolicy", steps: [http("r", "/hello", { redirectPolicy: "sometimes" })] },
  ],
  { httpTarget },
);
