/**
 * How a command runs from a snapshot: the shell starts without its startup
 * files (bash -p, zsh -f, sh without -l), evaluates the captured state, then
 * runs the client's script, with the captured environment under the
 * request's own variables.
 *
 * The state travels in environment variables, 60 KiB each, that the shell
 * unsets before it evaluates them: upstream's replay when it cannot hand the
 * shell a file descriptor (the process host hands a child only its stdio). For
 * bash and zsh the restoring command is one line, as upstream's
 * descriptor-sourcing line is, so the client's script starts on line 3 and
 * the shell's error messages name the same line numbers; for sh it is
 * upstream's two-line form.
 */
import type { EnvMap } from "@execmux/shared";
import { isNonInheritable, type ShellSnapshot } from "./parse.js";
import type { SnapshotShell } from "./scripts.js";

const CHUNK_BYTES = 60 * 1024;
const CHUNK_PREFIX = "__CODEX_SHELL_SNAPSHOT_STATE_";

/** What each shell needs before the state: its flag in place of -lc, and a line to undo what the flag changed. */
const LAUNCH: Record<SnapshotShell, { readonly flag: string; readonly startup: string }> = {
  // -p skips the startup files (and BASH_ENV, and functions exported by the environment).
  bash: { flag: "-pc", startup: "set +o privileged\n" },
  zsh: { flag: "-fc", startup: "setopt RCS\n" },
  sh: { flag: "-c", startup: "" },
};

/** Splits `state` into pieces of at most CHUNK_BYTES bytes, never inside a UTF-8 character. */
function chunks(state: string): string[] {
  const bytes = Buffer.from(state);
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(bytes.length, start + CHUNK_BYTES);
    // A continuation byte (10xxxxxx) cannot start a character.
    while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
    pieces.push(bytes.subarray(start, end).toString());
    start = end;
  }
  return pieces;
}

export interface Replay {
  readonly argv: string[];
  readonly env: Record<string, string>;
}

/**
 * `argv` is the client's [shell, "-lc", script, ...]; `env` the process's
 * environment as built without a snapshot; `requestEnv` the request's own
 * variables, which win over the captured ones.
 */
export function replay(shell: SnapshotShell, snapshot: ShellSnapshot, argv: readonly string[], env: Record<string, string>, requestEnv: EnvMap | null | undefined): Replay {
  const merged = Object.assign(Object.create(null) as Record<string, string>, env, snapshot.environment);
  for (const name of Object.keys(requestEnv ?? {})) merged[name] = env[name] ?? requestEnv![name]!;
  for (const name of Object.keys(merged)) if (isNonInheritable(name)) delete merged[name];

  const names = chunks(snapshot.state).map((piece, index) => {
    const name = `${CHUNK_PREFIX}${index}`;
    merged[name] = piece;
    return name;
  });
  const separator = shell === "sh" ? "\n" : ";";
  const restore = `eval "unset ${names.join(" ")}${separator}${names.map((name) => `\${${name}}`).join("")}"`;
  const { flag, startup } = LAUNCH[shell];
  const script = `${startup}if ! ${restore} >/dev/null; then printf 'failed to restore shell snapshot\\n' >&2; fi\n${argv[2]}`;
  return { argv: [argv[0]!, flag, script, ...argv.slice(3)], env: merged };
}
