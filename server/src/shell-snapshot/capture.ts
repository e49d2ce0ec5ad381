/**
 * One capture: the client's login shell, started as the process itself
 * would be (the same program, cwd, environment, sandbox and argv[0]) by the
 * process host, in the session's own tree there (its cgroup, killed with
 * the session's processes), running the capture script (scripts.ts) in
 * place of the client's. It is no process of the client's: it has no
 * process id the client can name, and no listing shows it. Its stdin is
 * closed, its stderr dropped, its stdout kept up to a bound. Past the time
 * limit or the bound its tree is killed, and the capture has failed; either
 * way the host forgets it (and the output it retained) once it is over
 * (forgetting a process that still runs kills its tree: proc_forget).
 */
import { randomUUID } from "node:crypto";
import { SpawnFailure, type ProcessEvents, type ProcessHost } from "../host/process-host.js";

/** Upstream's bounds: the capture's output (8 snapshots' worth, for its environment and noise) and its time. */
export const MAX_CAPTURE_OUTPUT_BYTES = 8 * 512 * 1024;
export const CAPTURE_TIMEOUT_MS = 10_000;

/**
 * The host record's `meta` of a capture: a daemon that finds one left by an
 * earlier daemon (it died mid-capture) kills and forgets it rather than
 * adopting it as a process of the client's (runtime.ts).
 */
export const CAPTURE_META = '{"shellSnapshotCapture":true}';

export interface CaptureLaunch {
  /** What is exec'd, and its whole argv (argv[0] included), as the start's own process would be. */
  readonly file: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly sandboxed: boolean;
  readonly networkSandbox: boolean;
}

export interface CaptureHost {
  readonly host: ProcessHost;
  /** The session the capture is for: it runs in that session's tree in the host. */
  readonly sessionId: string;
}

export type CaptureOutcome = { readonly output: Buffer } | { readonly failure: string };

export async function runCapture(launch: CaptureLaunch, { host, sessionId }: CaptureHost): Promise<CaptureOutcome> {
  const chunks: Buffer[] = [];
  const sizes = { stdout: 0, stderr: 0 };
  let failure: string | undefined;
  let exit: { code: number; signal: NodeJS.Signals | null } | undefined;
  let handle: number | undefined;
  let settle: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  /** SIGKILL to its whole tree, and its record and retained output gone. */
  const dispose = () => {
    if (handle !== undefined) host.forget(handle);
    handle = undefined;
  };
  const fail = (reason: string) => {
    if (failure !== undefined) return;
    failure = reason;
    dispose();
    settle();
  };
  const events: ProcessEvents = {
    output(_seq, stream, data) {
      if (failure !== undefined || stream === "pty") return;
      // stderr is dropped, but bounded as stdout is: a profile flooding it is stopped too.
      sizes[stream] += data.length;
      if (sizes[stream] > MAX_CAPTURE_OUTPUT_BYTES) return fail(`the capture printed more than ${MAX_CAPTURE_OUTPUT_BYTES} bytes`);
      if (stream === "stdout") chunks.push(data);
    },
    exited(_seq, code, signal) {
      exit = { code, signal };
    },
    closed: () => settle(),
    forgotten: () => settle(),
  };
  try {
    const started = await host.start(
      {
        sessionId,
        // A name no client process has (a client's ids are its own map's, never the host's): for the host's log.
        processId: `shell-snapshot-capture-${randomUUID()}`,
        file: launch.file,
        argv: launch.argv,
        env: launch.env,
        cwd: launch.cwd,
        tty: false,
        pipeStdin: false,
        cols: 80,
        rows: 24,
        sandboxed: launch.sandboxed,
        networkSandbox: launch.networkSandbox,
        meta: Buffer.from(CAPTURE_META),
      },
      events,
    );
    handle = started.handle;
  } catch (error) {
    return { failure: `the capture could not start: ${error instanceof SpawnFailure ? `${error.errno} (${error.stage})` : (error as Error).message}` };
  }
  // Output past the bound may have come before the handle was known.
  if (failure !== undefined) dispose();
  const timer = setTimeout(() => fail(`the capture took longer than ${CAPTURE_TIMEOUT_MS} ms`), CAPTURE_TIMEOUT_MS);
  await settled;
  clearTimeout(timer);
  if (failure === undefined && (exit === undefined || exit.code !== 0 || exit.signal)) {
    failure = `the capture exited with ${exit?.signal ?? exit?.code ?? "no status"}`;
  }
  // Exited and closed: forgetting it kills nothing. What the startup files
  // left running (an ssh-agent, say) lives on in the session's tree, as upstream lets it.
  dispose();
  return failure === undefined ? { output: Buffer.concat(chunks) } : { failure };
}
