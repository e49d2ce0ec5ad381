/**
 * The spawner: a small helper process that forks every pipe child for the
 * daemon (PTY children are still forked by the daemon, see spawn-pty.ts).
 *
 * fork() copies the parent's page tables and libuv waits for the child's
 * exec, all on the event loop, so spawning from the daemon itself gets
 * slower and stalls everything longer the more memory the daemon holds
 * (retained output). This process stays small, so spawning costs the same
 * whatever the daemon holds, and the daemon's event loop only exchanges a
 * few IPC messages. Each pipe is a FIFO the daemon opens by name (see
 * protocol.ts for why).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, rmSync } from "node:fs";
import { FifoPool, openBothEnds } from "./fifo-pipe.js";
import { FIFO_DIRECTORY_ENV, type ChildPipes, type DaemonMessage, type SpawnRequest, type SpawnerMessage } from "./protocol.js";

const fifoDirectory = process.env[FIFO_DIRECTORY_ENV];
if (!fifoDirectory) {
  process.stderr.write(`execmux spawner: ${FIFO_DIRECTORY_ENV} is not set; this process is started by the daemon\n`);
  process.exit(1);
}
const fifos = new FifoPool(fifoDirectory);

const send = (message: SpawnerMessage) => {
  if (process.connected) process.send!(message);
};

/**
 * The daemon's ends of a child's pipes, held here until the daemon has
 * opened its own: until then the child must see neither EOF on stdin nor
 * EPIPE on stdout.
 */
interface Held {
  readonly fds: number[];
  readonly paths: string[];
  readonly timer: NodeJS.Timeout;
}
const held = new Map<number, Held>();
/** A daemon that never says "release" (it died meanwhile) does not leak them. */
const HOLD_LIMIT_MS = 30_000;

function release(id: number): void {
  const entry = held.get(id);
  if (!entry) return;
  held.delete(id);
  clearTimeout(entry.timer);
  for (const fd of entry.fds) closeSync(fd);
  for (const path of entry.paths) rmSync(path, { force: true });
}

async function spawnWithPipes(request: SpawnRequest): Promise<{ child: ChildProcess; pipes: ChildPipes }> {
  const pipes = { stdin: request.pipeStdin ? await fifos.take() : undefined, stdout: await fifos.take(), stderr: await fifos.take() };
  const childEnds: number[] = [];
  const entry: Held = {
    fds: [],
    paths: [pipes.stdin, pipes.stdout, pipes.stderr].filter((path) => path !== undefined),
    timer: setTimeout(() => release(request.id), HOLD_LIMIT_MS).unref(),
  };
  held.set(request.id, entry);
  /** Opens a pipe: `childReads` says which end is the child's; the other is held for the daemon. */
  const open = (path: string, childReads: boolean) => {
    const { read, write } = openBothEnds(path);
    childEnds.push(childReads ? read : write);
    entry.fds.push(childReads ? write : read);
    return childReads ? read : write;
  };
  try {
    const stdin = pipes.stdin === undefined ? "ignore" : open(pipes.stdin, true);
    const stdout = open(pipes.stdout, false);
    const stderr = open(pipes.stderr, false);
    const child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      ...(request.argv0 !== undefined ? { argv0: request.argv0 } : {}),
      // A closed stdin is /dev/null: the child reads EOF at once.
      stdio: [stdin, stdout, stderr],
      // A new session and process group, so the whole tree can be signalled.
      detached: true,
    });
    return { child, pipes };
  } catch (error) {
    release(request.id);
    throw error;
  } finally {
    // The child has its own copies now (or never will).
    for (const fd of childEnds) closeSync(fd);
  }
}

/** Children still running, so they can be killed if the daemon dies. */
const running = new Set<number>();

process.on("message", (message: DaemonMessage) => {
  if (message.type === "release") return release(message.id);
  const request = message;
  const reportFailure = (error: NodeJS.ErrnoException) =>
    send({ type: "failed", id: request.id, code: error.code ?? "EUNKNOWN", message: error.message });
  spawnWithPipes(request).then(
    ({ child, pipes }) => {
      child.once("error", (error: NodeJS.ErrnoException) => {
        release(request.id);
        reportFailure(error);
      });
      // Known from here, so a kill of this helper takes it along even before it is reported.
      if (child.pid !== undefined) running.add(child.pid);
      child.once("spawn", () => send({ type: "spawned", id: request.id, pid: child.pid!, pipes }));
      child.once("exit", (code, signal) => {
        running.delete(child.pid!);
        send({ type: "exit", id: request.id, code, signal });
      });
    },
    reportFailure,
  );
});

/** Takes every child's process group with this process rather than leave orphans, nor FIFOs. */
function killAllAndExit(): never {
  for (const id of [...held.keys()]) release(id);
  fifos.discard();
  // The daemon is gone: its FIFO directory is nobody's any more.
  if (!process.connected) rmSync(fifoDirectory!, { recursive: true, force: true });
  for (const pid of running) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  process.exit(0);
}

// The daemon is gone (even killed outright: the IPC channel closes with it).
process.on("disconnect", killAllAndExit);
// Signalled on its own (it has a process group of its own, so this is not
// the daemon's shutdown): the children would be unreachable once it is gone.
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, killAllAndExit);
