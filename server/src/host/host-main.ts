/**
 * The process host: holds the sessions, their processes, PTYs, pipes and
 * retained output, and faces no network. The daemon that listens on the
 * port (the front, front-daemon.ts) relays each client's messages over a
 * unix socket; when the front dies (a crash, SIGKILL, an upgrade) the host
 * and every process keep running, and the front started next with the same
 * command finds this host by its socket and carries on. Clients reconnect
 * and resume with their cursors, as after any network drop.
 *
 * It ends when told to (the front's shutdown, or SIGTERM), or once no front
 * is attached and no session is left (they expire like any detached
 * session, after --session-ttl-ms).
 */
import { chmodSync, lstatSync, rmSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import type { Config } from "../config.js";
import { createLogger } from "../logger.js";
import { startRuntime } from "../runtime.js";
import { EXECMUX_VERSION } from "../version.js";
import { HostLog } from "./host-log.js";
import { agreedVersion, HOST_CONFIG_ENV, HOST_PRIVATE_ENV, HOST_SOCKET_ENV, shareableConfig, LINK_VERSION, MIN_LINK_VERSION, type ControlReply, type ControlRequest, type Hello } from "./host-protocol.js";
import { WebSocketServer, type WebSocket } from "ws";
import { onClientSocketError, SHUTDOWN_CLOSE } from "../transport/websocket-transport.js";
import { encodeFrame, FrameKind, FrameReader, readFirstFrame } from "./link-frames.js";
import { webSocketOverLink } from "./link-websocket.js";

const socketPath = process.env[HOST_SOCKET_ENV];
const configText = process.env[HOST_CONFIG_ENV];
if (!socketPath || !configText) {
  process.stderr.write(`execmux host: ${HOST_SOCKET_ENV} and ${HOST_CONFIG_ENV} are not set; this process is started by \`execmux serve\`\n`);
  process.exit(1);
}
// Children inherit the daemon's environment: not these.
delete process.env[HOST_SOCKET_ENV];
delete process.env[HOST_CONFIG_ENV];
const config = JSON.parse(configText) as Config;
const privateHost = process.env[HOST_PRIVATE_ENV] === "1";
delete process.env[HOST_PRIVATE_ENV];

/** A link must say who it is this soon after connecting. */
const HELLO_TIMEOUT_MS = 5_000;
/** How often a host without a front checks whether any session is left. */
const ALONE_CHECK_MS = 1_000;
/** A host nobody attached to this long after it listened (its daemon died while starting) ends. */
const FIRST_ATTACH_MS = 30_000;
/** A hello, a control request: small. */
const HELLO_LIMIT_BYTES = 64 * 1024;

const hostLog = new HostLog();
const log = createLogger(config, undefined, hostLog);
const runtime = startRuntime(config, log);
const ourHello: Hello = {
  role: "host",
  linkVersion: LINK_VERSION,
  minLinkVersion: MIN_LINK_VERSION,
  execmuxVersion: EXECMUX_VERSION,
  pid: process.pid,
  config: shareableConfig(config),
};

let front: Socket | undefined;
/** The attached daemon's pid, for a second daemon's refusal. */
let frontPid: number | undefined;
let attachedOnce = false;
let ending: Promise<void> | undefined;
/** The socket this host made (device and inode): another host's socket at the same path is never removed. */
let ownSocket: { dev: number; ino: number } | undefined;
const clientSockets = new Set<WebSocket>();
/** The frame limits and defaults ws gives an in-process daemon's clients. */
const webSocketOptions = new WebSocketServer({ noServer: true, maxPayload: config.maxMessageBytes }).options;
const startedAt = Date.now();

const server = createServer((socket) => acceptLink(socket));

function acceptLink(socket: Socket): void {
  socket.on("error", () => undefined); // "close" follows
  const helloTimer = setTimeout(() => socket.destroy(), HELLO_TIMEOUT_MS);
  // The front is trusted, but a hello's bound still stops a confused one from filling the heap.
  readFirstFrame(socket, HELLO_LIMIT_BYTES).then(
    ({ kind, payload, rest }) => {
      clearTimeout(helloTimer);
      const hello = kind === FrameKind.Hello ? parseHello(payload) : undefined;
      if (!hello) {
        log.error("a link did not open with a hello; it is closed");
        return void socket.destroy();
      }
      if (agreedVersion(ourHello, hello) === undefined) {
        log.error({ theirs: hello }, "a daemon speaking an incompatible link version was refused");
        return void socket.end(encodeFrame(FrameKind.Hello, JSON.stringify(ourHello)));
      }
      if (hello.role === "control") acceptFront(socket, hello, rest);
      else acceptClient(socket, hello, rest);
    },
    (error: Error) => {
      log.error({ err: error }, "a link sent a malformed frame; it is closed");
      socket.destroy();
    },
  );
}

function parseHello(payload: Buffer): Hello | undefined {
  try {
    return JSON.parse(payload.toString()) as Hello;
  } catch {
    return undefined;
  }
}

function acceptFront(socket: Socket, hello: Hello, rest: Buffer): void {
  if (front || ending) {
    const reason = ending
      ? "this process host is shutting down"
      : `another execmux daemon${frontPid ? ` (pid ${frontPid})` : ""} is attached to this process host (pid ${process.pid})`;
    socket.end(encodeFrame(FrameKind.Reply, JSON.stringify({ id: 0, error: reason } satisfies ControlReply)));
    return;
  }
  front = socket;
  frontPid = hello.pid;
  attachedOnce = true;
  socket.write(encodeFrame(FrameKind.Hello, JSON.stringify(ourHello)));
  hostLog.attach(socket);
  log.info("a daemon attached to the process host");
  socket.once("close", () => {
    hostLog.detach(socket);
    front = undefined;
    if (ending) return;
    // A host of a port-0 daemon can never be found again (its address dies with the front): it ends with its front.
    if (privateHost) return void endAndExit("its daemon is gone, and no other can find this host");
    log.warn({ sessions: runtime.registry.size }, "the daemon left the process host; sessions keep running until one attaches again or they expire");
  });
  const reader = new FrameReader(HELLO_LIMIT_BYTES, (kind, payload) => {
    if (kind !== FrameKind.Request) return;
    const request = JSON.parse(payload.toString()) as ControlRequest;
    const reply = (body: Omit<ControlReply, "id">) => {
      if (!socket.destroyed) socket.write(encodeFrame(FrameKind.Reply, JSON.stringify({ id: request.id, ...body })));
    };
    answer(request).then(
      (result) => {
        reply({ result });
        // Told to shut down: every process is gone by now, and so is this host once the front has the answer.
        if (request.method === "shutdown") socket.end(() => process.exit(0));
      },
      (error: Error) => reply({ error: error.message }),
    );
  });
  const read = (chunk: Buffer) => {
    try {
      reader.push(chunk);
    } catch (error) {
      log.error({ err: error }, "the daemon sent a malformed control frame; its link is closed");
      socket.destroy();
    }
  };
  read(rest);
  socket.on("data", read);
  socket.resume();
}

async function answer(request: ControlRequest): Promise<unknown> {
  switch (request.method) {
    case "metrics":
      return runtime.metrics.exposition();
    case "ready":
      return runtime.spawner.checkReady();
    case "shutdown":
      await end("the daemon shut down");
      return true;
  }
}

function acceptClient(link: Socket, hello: Hello, head: Buffer): void {
  if (ending) return void link.destroy();
  const socket = webSocketOverLink(link, head, webSocketOptions);
  // A client that reads nothing leaves its link paused behind its data, where
  // the front would never read the link's end: the end travels beside it, on
  // the control link of the front that opened the link (its numbers are its own).
  const openedBy = front;
  const tellFront = (kind: FrameKind) => {
    if (hello.linkId !== undefined && front && front === openedBy) front.write(encodeFrame(kind, String(hello.linkId)));
  };
  socket.on("error", (error) => onClientSocketError(error, socket, log));
  clientSockets.add(socket);
  socket.once("close", () => {
    clientSockets.delete(socket);
    tellFront(FrameKind.Closed);
  });
  runtime.serveWebSocket(socket, hello.peer ?? { transport: "websocket" }, log, () => tellFront(FrameKind.Terminate));
}

/**
 * Every client link closed and no new one taken, every process tree
 * terminated (SIGTERM, the grace period, SIGKILL), this host's socket
 * removed. Never rejects: a host told to end ends.
 */
function end(why: string): Promise<void> {
  return (ending ??= (async () => {
    clearInterval(aloneTimer);
    log.info({ why }, "the process host is stopping");
    server.close();
    // Told why, as an in-process daemon's clients are; whoever is still there after the processes are gone is cut off.
    for (const socket of clientSockets) socket.close(SHUTDOWN_CLOSE.code, SHUTDOWN_CLOSE.reason);
    removeOwnSocket();
    try {
      await runtime.close();
    } catch (error) {
      log.error({ err: error }, "shutting the sessions down failed");
    }
    for (const socket of clientSockets) socket.terminate();
  })());
}

function endAndExit(why: string): void {
  void end(why).then(() => process.exit(0));
}

function removeOwnSocket(): void {
  try {
    const found = lstatSync(socketPath!);
    if (ownSocket && found.dev === ownSocket.dev && found.ino === ownSocket.ino) rmSync(socketPath!, { force: true });
  } catch {
    // gone already
  }
}

/** Ends a host that has no daemon and no session left, or that no daemon ever attached to. */
const aloneTimer = setInterval(() => {
  if (front || ending) return;
  if (!attachedOnce && Date.now() - startedAt > FIRST_ATTACH_MS) return endAndExit("no daemon attached after it started");
  if (attachedOnce && runtime.registry.size === 0) endAndExit("no daemon and no session left");
}, ALONE_CHECK_MS);

async function main(): Promise<void> {
  await runtime.spawner.whenReady();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath!, 0o600);
  const made = lstatSync(socketPath!);
  ownSocket = { dev: made.dev, ino: made.ino };
  log.info({ socket: socketPath, pid: process.pid }, "process host listening");
}

// Signals reach the host only when sent to it: it has a session of its own, away from the front's terminal.
process.on("SIGTERM", () => endAndExit("SIGTERM"));
for (const ignored of ["SIGINT", "SIGHUP"] as const) process.on(ignored, () => undefined);

main().catch((error: Error) => {
  process.stderr.write(`execmux host: ${error.message}\n`);
  process.exit(1);
});
