/**
 * shellSnapshotV2 (process/start's `shellSnapshot`) against the real upstream
 * 0.171: a `[shell, "-lc", script]` start with a snapshot scope reads its
 * login profile once (the capture, which prints nothing) and every start of
 * the scope after runs from that capture: the same functions, options,
 * aliases and exported variables, without the profile's output, its side
 * effects or its `cd`, not as a login shell. For bash, zsh and sh (with its
 * $ENV file), under an environment policy and in a sandbox; on a PTY, with an
 * argv[0], with arguments; the refusals in upstream's words and order; the
 * starts that run as they came (another argv form, a failed or slow capture,
 * too large a capture, three tries at most); the cache's scope (a resumed
 * session keeps it, a new one captures again). Each case's HOME is
 * `<scratch>/home`, its profile counting the times it runs in `home/count`.
 */
import { expect } from "vitest";
import { describeDifferential, observationOf, type DifferentialCase, type Observation } from "./helpers/differential.js";
import { ENV, events, start, startParams, readsDisk } from "./helpers/exec-server-frames.js";

const HOME = "<scratch>/home";
const BASH = { name: "bash", path: "/bin/bash" };
const ZSH = { name: "zsh", path: "/usr/bin/zsh" };
const SH = { name: "sh", path: "/bin/sh" };
type Shell = { name: string; path: string };

const snapshot = (scopeId = "thread-1:remote", shell: Shell = BASH) => ({ scopeId, shell });
/** process/start of `[shell.path, "-lc", script]` with HOME in the scratch directory. */
const login = (processId: string, script: string, shellSnapshot: unknown, overrides: Record<string, unknown> = {}, shell: Shell = BASH) => ({
  request: "process/start",
  params: startParams(processId, "", { argv: [shell.path, "-lc", script], env: { ...ENV, HOME }, shellSnapshot, ...overrides }),
});
/** How often the profile has run, read without a login shell. */
const count = [start("count", 'wc -l < "$HOME/count"', { env: { ...ENV, HOME } }), events("count")];

const BASH_FILES = {
  "home/.profile": [
    'echo "profile ran"',
    'echo x >> "$HOME/count"',
    "export FROM_PROFILE=p1 FOO=profile SECRET_TOKEN=s3cret",
    'export PATH="/opt/from-profile:$PATH"',
    'export MULTI="line one',
    'line two"',
    "cd /",
    '[ -f "$HOME/.bashrc" ] && . "$HOME/.bashrc"',
    "",
  ].join("\n"),
  "home/.bashrc": [
    'echo "bashrc ran"',
    'export FROM_RC="rc value"',
    'myfunc() { echo "myfunc says $1"; }',
    "alias ll='echo aliased'",
    "set -o noclobber",
    "shopt -s extglob",
    "",
  ].join("\n"),
};
/** What a command sees of its shell: function, variables, cwd, login or not, options, aliases, the whole environment. */
const BASH_REPORT = [
  // One stream: how stdout and stderr interleave is up to each server's reads.
  "exec 2>&1",
  "myfunc hi",
  'echo "FROM_RC=$FROM_RC FROM_PROFILE=$FROM_PROFILE FOO=$FOO"',
  "pwd",
  "shopt -q login_shell && echo login || echo not-login",
  'echo "flags=$-"',
  "set -o | grep noclobber",
  "shopt extglob",
  "alias",
  'echo "count=$(wc -l < "$HOME/count")"',
  "env | LC_ALL=C sort",
  "nosuchcommand",
].join("; ");

const ZSH_FILES = {
  "home/.zprofile": ['echo "zprofile ran"', 'echo x >> "$HOME/count"', "export FROM_ZPROFILE=zp", ""].join("\n"),
  "home/.zshrc": ['echo "zshrc ran"', 'zfunc() { echo "zfunc $1"; }', "alias zz='echo zz-alias'", "setopt extendedglob", 'export FROM_ZSHRC="z rc"', ""].join("\n"),
};
const ZSH_REPORT = 'exec 2>&1; echo "$0 $-"; zfunc a; alias; setopt; echo "FROM=$FROM_ZPROFILE/$FROM_ZSHRC"; wc -l < "$HOME/count"; nosuchcommand';

const SH_FILES = {
  "home/.profile": ['echo "sh profile ran"', 'echo x >> "$HOME/count"', "export FROM_SHPROFILE=sp", 'export ENV="$HOME/.shrc"', ""].join("\n"),
  "home/.shrc": ['echo "shrc ran"', 'sfunc() { echo "sfunc $1"; }', "alias ss='echo ss-alias'", "set -o noglob", "export FROM_SHRC=src", ""].join("\n"),
};
const SH_REPORT = 'exec 2>&1; echo "$0 $-"; alias; set -o | grep " on"; echo "FROM=$FROM_SHPROFILE/$FROM_SHRC"; wc -l < "$HOME/count"; sfunc a; nosuchcommand';

/**
 * A profile that behaves differently when it runs for a capture: bash names
 * the -c script in BASH_EXECUTION_STRING, and a capture's script is not the
 * client's. Each run appends to home/count.
 */
const captureProfile = (forTheCommand: string, forACapture: string, command: string) => ({
  "home/.profile": ['echo x >> "$HOME/count"', `case "$BASH_EXECUTION_STRING" in *${JSON.stringify(command)}*) ${forTheCommand} ;; *) ${forACapture} ;; esac`, ""].join("\n"),
});
const bigProfile = (body: string) => ({ "home/.profile": `${body}\n` });
/** Waits at least `ms` (upstream's retry rule is about time: a second between tries). */
const pause = (id: string, ms: number) => [start(id, `sleep ${ms / 1000}`), events(id)];

const workspaceSandbox = {
  permissions: readsDisk(
    { path: { type: "special", value: { kind: "project_roots" } }, access: "write" },
    { path: { type: "special", value: { kind: "project_roots", subpath: ".git" } }, access: "read", missing_path_behavior: "skip" },
  ),
  cwd: "file://<scratch>/project",
  workspaceRoots: ["file://<scratch>/project"],
  windowsSandboxLevel: "disabled",
  useLegacyLandlock: false,
};

const behaviour: DifferentialCase[] = [
  {
    name: "bash: the first start of a scope captures, later ones run from the snapshot; another scope captures again",
    files: BASH_FILES,
    steps: [
      login("plain", BASH_REPORT, null),
      events("plain"),
      login("first", BASH_REPORT, snapshot()),
      events("first"),
      login("second", BASH_REPORT, snapshot()),
      events("second"),
      login("other", BASH_REPORT, snapshot("thread-2:remote")),
      events("other"),
      ...count,
    ],
  },
  {
    name: "bash under an environment policy: it filters what the profile exported, and the request's variables win",
    files: BASH_FILES,
    steps: [
      login("p", BASH_REPORT, snapshot(), {
        envPolicy: { inherit: "none", ignoreDefaultExcludes: false, exclude: ["FROM_RC"], set: { SETVAR: "from set" }, includeOnly: [] },
        env: { ...ENV, HOME, FOO: "request" },
      }),
      events("p"),
    ],
  },
  {
    name: "bash in a sandbox: the capture runs in it too (its profile cannot write HOME), the snapshot is used",
    files: { ...BASH_FILES, "project/.keep": "" },
    steps: [
      login("first", BASH_REPORT, snapshot(), { cwd: "file://<scratch>/project", sandbox: workspaceSandbox }),
      events("first"),
      login("second", `${BASH_REPORT}; touch "$HOME/x"`, snapshot(), { cwd: "file://<scratch>/project", sandbox: workspaceSandbox }),
      events("second"),
    ],
  },
  {
    name: "bash: on a PTY, with argv[0] given, with arguments after the script",
    files: BASH_FILES,
    steps: [
      login("pty", "myfunc pty; shopt -q login_shell && echo login || echo not-login", snapshot(), { tty: true }),
      events("pty"),
      login("arg0", 'myfunc arg0; echo "$0"', snapshot(), { arg0: "custom-zero" }),
      events("arg0"),
      { request: "process/start", params: startParams("args", "", { argv: ["/bin/bash", "-lc", 'myfunc args; echo "$0 $*"', "zero", "one", "two"], env: { ...ENV, HOME }, shellSnapshot: snapshot() }) },
      events("args"),
      ...count,
    ],
  },
  {
    name: "zsh: the snapshot keeps functions and options, runs with -f",
    files: ZSH_FILES,
    steps: [
      login("plain", ZSH_REPORT, null, {}, ZSH),
      events("plain"),
      login("first", ZSH_REPORT, snapshot("z", ZSH), {}, ZSH),
      events("first"),
      login("second", ZSH_REPORT, snapshot("z", ZSH), {}, ZSH),
      events("second"),
    ],
  },
  {
    name: "sh: the capture reads $ENV, drops aliases, keeps options; dash has no functions to keep",
    files: SH_FILES,
    steps: [
      login("plain", SH_REPORT, null, {}, SH),
      events("plain"),
      login("first", SH_REPORT, snapshot("s", SH), {}, SH),
      events("first"),
      login("second", SH_REPORT, snapshot("s", SH), {}, SH),
      events("second"),
    ],
  },
  {
    name: "another argv form runs as it came: -c, another path, no script; a shell named sh replays as sh",
    files: BASH_FILES,
    steps: [
      { request: "process/start", params: startParams("c", "", { argv: ["/bin/bash", "-c", "shopt -q login_shell && echo login || echo not-login"], env: { ...ENV, HOME }, shellSnapshot: snapshot() }) },
      events("c"),
      { request: "process/start", params: startParams("path", "", { argv: ["bash", "-lc", "echo $0"], env: { ...ENV, HOME }, shellSnapshot: snapshot() }) },
      events("path"),
      { request: "process/start", params: startParams("short", "", { argv: ["/bin/bash", "-lc"], env: { ...ENV, HOME }, shellSnapshot: snapshot() }) },
      events("short"),
      login("named-sh", "exec 2>&1; myfunc named-sh; shopt -q login_shell && echo login || echo not-login; nosuchcommand", snapshot("s", { name: "sh", path: "/bin/bash" })),
      events("named-sh"),
      ...count,
    ],
  },
];

const refusals: DifferentialCase[] = [
  {
    name: "refusals: the scope's size, the shell's name (only for the -lc form), the request's shape",
    files: BASH_FILES,
    steps: [
      login("empty-scope", "echo never", snapshot("")),
      login("long-scope", "echo never", snapshot("x".repeat(257))),
      // 256 bytes in 129 characters: the bound is in bytes.
      login("multibyte-scope", "echo never", snapshot(`${"é".repeat(128)}x`)),
      login("fish", "echo never", snapshot("s", { name: "fish", path: "/bin/bash" })),
      login("Bash", "echo never", snapshot("s", { name: "Bash", path: "/bin/bash" })),
      login("scope-before-shell", "echo never", snapshot("", { name: "fish", path: "/bin/bash" })),
      login("no-shell", "echo never", { scopeId: "s" }),
      login("number-scope", "echo never", { scopeId: 5, shell: BASH }),
      login("string", "echo never", "not an object"),
      login("shell-string", "echo never", { scopeId: "s", shell: "bash" }),
      // Checked before the process id is: a duplicate id with a bad scope gets the scope's error.
      login("dup", "sleep 2", null),
      login("dup", "echo never", snapshot("")),
      events("dup"),
      { request: "process/start", params: startParams("fish-c", "", { argv: ["/bin/bash", "-c", "echo not refused"], env: { ...ENV, HOME }, shellSnapshot: snapshot("s", { name: "fish", path: "/bin/fish" }) }) },
      events("fish-c"),
      login("longest-scope", "echo 256 bytes are fine", snapshot("x".repeat(256))),
      events("longest-scope"),
      login("null", "echo null is no snapshot; shopt -q login_shell && echo login", null, { shellSnapshot: null }),
      events("null"),
    ],
  },
];

const failures: DifferentialCase[] = [
  {
    name: "a capture that fails runs the command as it came; a second later it is tried again, three tries in all",
    files: captureProfile('echo "profile ok"', "exit 3", "try ran"),
    steps: [
      ...[1, 2, 3, 4].flatMap((n) => [
        ...(n > 1 ? pause(`pause-${n}`, 1200) : []),
        login(`try-${n}`, 'echo "try ran"; shopt -q login_shell && echo login', snapshot()),
        events(`try-${n}`),
      ]),
      // Three captures and four runs of the profile: seven.
      ...count,
    ],
    timeoutMs: 8000,
  },
  {
    name: "a capture past its 10 s runs the command as it came",
    files: captureProfile('echo "profile ok"', "sleep 12", "slow ran"),
    steps: [login("slow", 'echo "slow ran"; shopt -q login_shell && echo login || echo not-login', snapshot()), events("slow"), ...count],
    timeoutMs: 20_000,
  },
  {
    name: "an environment over 512 KiB is not kept: the command runs as it came",
    files: bigProfile('V=$(head -c 60000 /dev/zero | tr "\\0" b); for i in 1 2 3 4 5 6 7 8 9 10; do export BIG_$i=$V; done'),
    steps: [login("big-env", "shopt -q login_shell && echo login || echo not-login; env | grep -c ^BIG_", snapshot()), events("big-env")],
  },
  {
    name: "sh: a state over 512 KiB (replayed through the environment by both) is not kept",
    files: bigProfile('BIG=$(head -c 600000 /dev/zero | tr "\\0" a); eval "bigf() { echo $BIG; }"'),
    steps: [login("big-state", "shopt -q login_shell && echo login || echo not-login; type bigf | wc -c", snapshot("s", { name: "sh", path: "/bin/bash" })), events("big-state")],
  },
  {
    name: "bash: a state over 512 KiB",
    files: bigProfile('BIG=$(head -c 600000 /dev/zero | tr "\\0" a); eval "bigf() { echo $BIG; }"'),
    steps: [login("big-state", "shopt -q login_shell && echo login || echo not-login; type bigf | wc -c", snapshot()), events("big-state")],
    differs: {
      why: "upstream hands bash the state as a file descriptor and so keeps states up to its 4 MiB capture bound; execmux's spawner passes only stdio, so the state travels in environment variables, where upstream's own bound is 512 KiB: execmux runs the command as it came (a login shell, its profile read again)",
      assert: (upstream, execmux) => {
        expect(stdoutOf(upstream, "big-state")).toEqual(["text:not-login\n600043\n"]);
        expect(stdoutOf(execmux, "big-state")).toEqual(["text:login\n600043\n"]);
      },
    },
  },
];

/** The stdout a process's events carried (processEvents merges output per stream). */
function stdoutOf(transcript: Observation[], processId: string): unknown {
  const observed = observationOf(transcript, `a: events of ${processId}`) as { output: { params: { stream: string; chunk: string } }[] };
  return observed.output.filter(({ params }) => params.stream === "stdout").map(({ params }) => params.chunk);
}

const sessions: DifferentialCase[] = [
  {
    name: "the snapshots are the session's: a resumed session keeps them, a new session captures again",
    files: BASH_FILES,
    steps: [
      login("first", "myfunc first", snapshot()),
      events("first"),
      { disconnect: "a" },
      { connect: "b" },
      { on: "b", handshake: true, resume: "<session:a>" },
      { on: "b", ...login("resumed", 'myfunc resumed; echo "count=$(wc -l < "$HOME/count")"', snapshot()) },
      { on: "b", ...events("resumed") },
      { connect: "c" },
      { on: "c", handshake: true },
      { on: "c", ...login("new-session", 'myfunc new; echo "count=$(wc -l < "$HOME/count")"', snapshot()) },
      { on: "c", ...events("new-session") },
    ],
  },
];

describeDifferential("shell snapshots", [...behaviour, ...refusals, ...failures, ...sessions]);
