/**
 * The spawner: a small helper process that forks every pipe child for the
 * daemon (PTY children are still forked by the daemon, see spawn-pty.ts).
 *
 * fork() copies the parent's page tables and libuv waits for the child's
 * exec, all on the event loop, so spawning from the daemon itself gets
 * slower and stalls everything longer the more memory the daemon holds
 * (retained output). This process stays small, so spawning costs the same
 * whatever the daemon holds, and the daemon's event loop only exchanges a
 * few IPC messages. Pipes are handed back to the daemon as socket handles
 * over the IPC channel.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import type { SpawnRequest, SpawnerMessage } from "./protocol.js";

const send = (message: SpawnerMessage, handle?: Socket) => {
  if (process.connected) process.send!(message, handle as never);
};

/**
 * Node starts reading a child's stdout/stderr as soon as it creates them.
 * Stopping that before the first read means every byte stays in the kernel
 * until the daemon, which receives the handle, reads it.
 */
function holdReading(socket: NodeJS.ReadableStream | null): void {
  (socket as unknown as { _handle?: { readStop(): void } } | null)?._handle?.readStop();
}

function spawnPipes(request: SpawnRequest): ChildProcess {
  const child = spawn(request.file, request.args, {
    cwd: request.cwd,
    env: request.env,
    ...(request.argv0 !== undefined ? { argv0: request.argv0 } : {}),
    // A closed stdin is /dev/null: the child reads EOF at once.
    stdio: [request.pipeStdin ? "pipe" : "ignore", "pipe", "pipe"],
    // A new session and process group, so the whole tree can be signalled.
    detached: true,
  });
  holdReading(child.stdout);
  holdReading(child.stderr);
  return child;
}

/** Children still running, so they can be killed if the daemon dies. */
const running = new Set<number>();

process.on("message", (request: SpawnRequest) => {
  let child: ChildProcess;
  try {
    child = spawnPipes(request);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "EUNKNOWN";
    send({ type: "failed", id: request.id, code, message: (error as Error).message });
    return;
  }
  child.once("error", (error: NodeJS.ErrnoException) =>
    send({ type: "failed", id: request.id, code: error.code ?? "EUNKNOWN", message: error.message }),
  );
  // Known from here, so a kill of this helper takes it along even before it is reported.
  if (child.pid !== undefined) running.add(child.pid);
  child.once("spawn", () => {
    send({ type: "spawned", id: request.id, pid: child.pid! });
    // Handles leave this process with the message: the daemon owns them from here.
    ([0, 1, 2] as const).forEach((fd) => {
      const stream = child.stdio[fd] as Socket | null;
      if (stream) send({ type: "stdio", id: request.id, fd }, stream);
    });
  });
  child.once("exit", (code, signal) => {
    running.delete(child.pid!);
    send({ type: "exit", id: request.id, code, signal });
  });
});

/** Takes every child's process group with this process rather than leave orphans. */
function killAllAndExit(): never {
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
