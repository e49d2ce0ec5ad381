/**
 * The spawner: a small helper process that forks every pipe child for the
 * daemon (PTY children are still forked by the daemon, see spawn-pty.ts).
 *
 * fork() copies the parent's page tables and libuv waits for the child's
 * exec, all on the event loop, so spawning from the daemon itself gets
 * slower and stalls everything longer the more memory the daemon holds
 * (retained output). This process stays small, so spawning costs the same
 * whatever the daemon holds, and the daemon's event loop only exchanges a
 * few IPC messages. Each pipe is a connection to the daemon's stdio
 * listener (see protocol.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, type Socket } from "node:net";
import {
  ENDPOINT_ENV,
  decodeEndpoint,
  encodeStdioHeader,
  type SpawnRequest,
  type SpawnerMessage,
  type StdioFd,
} from "./protocol.js";

const endpointText = process.env[ENDPOINT_ENV];
if (!endpointText) {
  process.stderr.write(`execmux spawner: ${ENDPOINT_ENV} is not set; this process is started by the daemon\n`);
  process.exit(1);
}
const endpoint = decodeEndpoint(endpointText);

const send = (message: SpawnerMessage) => {
  if (process.connected) process.send!(message);
};

/** One stdio descriptor of a child: a connection to the daemon that has already said which. */
function connectStdio(id: number, fd: StdioFd): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path: endpoint.path });
    // Never read here: whatever the daemon writes is the child's input.
    socket.pause();
    socket.once("error", reject);
    socket.once("connect", () =>
      // The header must be in the kernel before the child can write after it.
      socket.write(encodeStdioHeader(endpoint.secret, id, fd), (error) => (error ? reject(error) : resolve(socket))),
    );
  });
}

/** The daemon gives up on a start after this long anyway. */
const CONNECT_PATIENCE_MS = 10_000;

/** EAGAIN: the daemon's accept queue is full (a burst of starts); it drains as the daemon accepts. */
async function connectStdioPatiently(id: number, fd: StdioFd): Promise<Socket> {
  const deadline = Date.now() + CONNECT_PATIENCE_MS;
  for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, 100)) {
    try {
      return await connectStdio(id, fd);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

async function spawnPipes(request: SpawnRequest): Promise<ChildProcess> {
  const fds: StdioFd[] = request.pipeStdin ? [0, 1, 2] : [1, 2];
  const settled = await Promise.allSettled(fds.map((fd) => connectStdioPatiently(request.id, fd)));
  const sockets = new Map<StdioFd, Socket>();
  settled.forEach((result, index) => result.status === "fulfilled" && sockets.set(fds[index]!, result.value));
  try {
    const failure = settled.find((result) => result.status === "rejected");
    if (failure) throw failure.reason;
    return spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      ...(request.argv0 !== undefined ? { argv0: request.argv0 } : {}),
      // A closed stdin is /dev/null: the child reads EOF at once.
      stdio: [sockets.get(0) ?? "ignore", sockets.get(1)!, sockets.get(2)!],
      // A new session and process group, so the whole tree can be signalled.
      detached: true,
    });
  } finally {
    // The child has its own copies; this process must not hold the other
    // end of the daemon's sockets open (destroy closes, it does not shut down).
    for (const socket of sockets.values()) socket.destroy();
  }
}

/** Children still running, so they can be killed if the daemon dies. */
const running = new Set<number>();

process.on("message", (request: SpawnRequest) => {
  spawnPipes(request).then(
    (child) => {
      child.once("error", (error: NodeJS.ErrnoException) =>
        send({ type: "failed", id: request.id, code: error.code ?? "EUNKNOWN", message: error.message }),
      );
      // Known from here, so a kill of this helper takes it along even before it is reported.
      if (child.pid !== undefined) running.add(child.pid);
      child.once("spawn", () => send({ type: "spawned", id: request.id, pid: child.pid! }));
      child.once("exit", (code, signal) => {
        running.delete(child.pid!);
        send({ type: "exit", id: request.id, code, signal });
      });
    },
    (error: NodeJS.ErrnoException) => send({ type: "failed", id: request.id, code: error.code ?? "EUNKNOWN", message: error.message }),
  );
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
