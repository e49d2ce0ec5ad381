/**
 * One capture: the client's login shell, started as the process itself
 * would be (the same program, cwd, environment, sandbox and argv[0]; forked
 * by the spawner, in a process tree of the session's), running the capture
 * script (scripts.ts) in place of the client's. Its stdin is closed, its
 * stderr dropped, its stdout kept up to a bound. Past the time limit or the
 * bound it is killed, and the capture has failed.
 */
import type { SpawnSpec } from "../process/child.js";
import type { ProcessTrees } from "../process/process-trees.js";
import { spawnPipe } from "../process/spawn-pipe.js";
import type { Spawner } from "../spawner/spawner.js";

/** Upstream's bounds: the capture's output (8 snapshots' worth, for its environment and noise) and its time. */
export const MAX_CAPTURE_OUTPUT_BYTES = 8 * 512 * 1024;
export const CAPTURE_TIMEOUT_MS = 10_000;

export interface CaptureLaunch {
  readonly file: string;
  readonly args: readonly string[];
  readonly arg0: string | undefined;
  readonly cwd: string;
  readonly env: Record<string, string>;
}

export interface CaptureHost {
  readonly spawner: Spawner;
  readonly processTrees: ProcessTrees;
  /** Whose processes the capture counts among (the session): its tree is killed with theirs. */
  readonly owner: object;
}

export type CaptureOutcome = { readonly output: Buffer } | { readonly failure: string };

export async function runCapture(launch: CaptureLaunch, host: CaptureHost): Promise<CaptureOutcome> {
  const tree = host.processTrees.create(host.owner);
  const chunks: Buffer[] = [];
  let size = 0;
  let failure: string | undefined;
  let stdoutEnded = false;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let settle: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const check = () => {
    if (failure !== undefined || (stdoutEnded && exit)) settle();
  };
  const fail = (reason: string) => {
    failure ??= reason;
    tree.kill();
    check();
  };
  const spec: SpawnSpec = { ...launch, pipeStdin: false, cols: 80, rows: 24, cgroup: tree.cgroup };
  try {
    const child = await spawnPipe(host.spawner, spec, {
      output(stream, data) {
        if (stream !== "stdout" || failure !== undefined) return;
        size += data.length;
        if (size > MAX_CAPTURE_OUTPUT_BYTES) return fail(`the capture printed more than ${MAX_CAPTURE_OUTPUT_BYTES} bytes`);
        chunks.push(data);
      },
      streamEnded(stream) {
        if (stream === "stdout") stdoutEnded = true;
        check();
      },
      exited(code, signal) {
        exit = { code, signal };
        check();
      },
    });
    tree.bind(child.pid);
    // Output past the bound may have come before the pid was known to the tree.
    if (failure !== undefined) tree.kill();
  } catch (error) {
    tree.release();
    return { failure: `the capture could not start: ${(error as Error).message}` };
  }
  const timer = setTimeout(() => fail(`the capture took longer than ${CAPTURE_TIMEOUT_MS} ms`), CAPTURE_TIMEOUT_MS);
  await settled;
  clearTimeout(timer);
  if (failure === undefined && (exit!.code !== 0 || exit!.signal)) failure = `the capture exited with ${exit!.signal ?? exit!.code}`;
  if (failure !== undefined) {
    tree.kill();
    tree.release();
    return { failure };
  }
  // What the startup files left running (an ssh-agent, say) lives on, as upstream lets it, until the session ends.
  tree.release();
  return { output: Buffer.concat(chunks) };
}
