/**
 * The process host: holds the sessions, their processes, PTYs, pipes and
 * retained output, and faces no network. `execmux serve` (the launcher,
 * launcher.ts) finds it by its unix socket, or starts it, and asks it to
 * fork the daemon that listens on the port (the front, daemon.ts), which
 * answers each client's HTTP handshake and hands the upgraded socket to
 * this process (front-process.ts); a TLS client's bytes it relays over a
 * link of their own. When the front or the launcher dies (a crash, SIGKILL,
 * an upgrade) the host and every process keep running, and the next
 * `execmux serve` with the same command finds this host and carries on.
 * Plain clients keep their connection (this process holds it); TLS clients reconnect and resume with their cursors.
 *
 * It ends when told to (the front's shutdown, or SIGTERM), or once no daemon
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
import { agreedVersion, HOST_CONFIG_ENV, HOST_PRIVATE_ENV, HOST_SOCKET_ENV, shareableConfig, LINK_VERSION, MIN_LINK_VERSION, type ControlReply, type AdoptedClient, type ControlRequest, type FrontCommand, type Hello } from "./host-protocol.js";
import { WebSocketServer, type WebSocket } from "ws";
import { onClientSocketError, SHUTDOWN_CLOSE } from "../transport/websocket-transport.js";
import { encodeFrame, FrameKind, readFirstFrame, readFrames } from "./link-frames.js";
import { webSocketOverLink } from "./link-websocket.js";
import { forkFront, type FrontProcess } from "./front-process.js";
import { settleWithin } from "../settle-within.js";

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
/** A launcher's Start frame carries its environment and command line, which the kernel bounds far below this. */
const LAUNCHER_FRAME_LIMIT_BYTES = 16 * 1024 * 1024;
/** How long a front told to shut down may take to exit, and its launcher to take the news, before this host exits anyway. */
const FRONT_EXIT_WAIT_MS = 10_000;

const hostLog = new HostLog();
const log = createLogger(config, undefined, hostLog);
const runtime = startRuntimeOrExit();

/** A setting the machine cannot honour (--spawner-pid-namespace on, --process-containment cgroup) is one line for the launcher to print, not a stack. */
function startRuntimeOrExit() {
  try {
    return startRuntime(config, log);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
}
const ourHello: Hello = {
  role: "host",
  linkVersion: LINK_VERSION,
  minLinkVersion: MIN_LINK_VERSION,
  execmuxVersion: EXECMUX_VERSION,
  pid: process.pid,
  config: shareableConfig(config),
};

/** The `execmux serve` this host runs a front for, and its pid (a second one's refusal names it). */
let launcher: Socket | undefined;
let launcherPid: number | undefined;
/** The front this host forked for it; it may outlive its launcher for a moment (killed, not yet gone). */
let frontProcess: FrontProcess | undefined;
/** The front's control link. */
let front: Socket | undefined;
/** The front was told to hand over (SIGUSR2), or let go of its control link while it still runs: it exits next. */
let frontLeaving = false;
let attachedOnce = false;
let ending: Promise<void> | undefined;
/** The socket this host made (device and inode): another host's socket at the same path is never removed. */
let ownSocket: { dev: number; ino: number } | undefined;
/** Which front counts each client, and by what number: the one that handed it over, or the one that adopted it since. */
interface ClientOwner {
  openedBy: Socket | undefined;
  linkId: number | undefined;
  readonly client: string | undefined;
}
const clientOwners = new Map<WebSocket, ClientOwner>();
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
      if (hello.role === "launcher") void acceptLauncher(socket, hello, rest);
      else if (hello.role === "control") acceptFront(socket, hello, rest);
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

function refuse(socket: Socket, reason: string): void {
  socket.end(encodeFrame(FrameKind.Reply, JSON.stringify({ id: 0, error: reason } satisfies ControlReply)));
}

/**
 * An `execmux serve`: this host forks the front it asks for once the hellos
 * agree, and tells it what the front prints and how it ends.
 */
async function acceptLauncher(socket: Socket, hello: Hello, rest: Buffer): Promise<void> {
  // A front that let go of this host (SIGUSR2) is on its way out: the next launcher waits for it rather than being refused.
  if (launcher && frontLeaving) {
    await settleWithin(frontProcess?.exited, FRONT_EXIT_WAIT_MS);
    if (socket.destroyed) return; // it gave up meanwhile
  }
  if (launcher || ending) {
    const reason = ending ? "this process host is shutting down" : `another execmux daemon${launcherPid ? ` (pid ${launcherPid})` : ""} is attached to this process host (pid ${process.pid})`;
    return refuse(socket, reason);
  }
  launcher = socket;
  launcherPid = hello.pid;
  attachedOnce = true;
  socket.write(encodeFrame(FrameKind.Hello, JSON.stringify(ourHello)));
  hostLog.attach(socket);
  log.info({ launcher: hello.pid }, "an execmux serve attached to the process host");
  let started: FrontProcess | undefined;
  let startAsked = false;
  /** Signals passed on before the front is forked (the last one still holds the port). */
  const early: string[] = [];
  const passSignal = (signal: string) => {
    if (!started) return void early.push(signal);
    // A hand-over: the next launcher, started right after, waits for this front to go.
    if (signal === "SIGUSR2") frontLeaving = true;
    started.signal(signal);
  };
  const onFrame = (kind: FrameKind, payload: Buffer) => {
    if (kind === FrameKind.Start && !startAsked) {
      startAsked = true;
      void start(JSON.parse(payload.toString()) as FrontCommand);
    }
    if (kind === FrameKind.Signal) passSignal(payload.toString());
  };
  socket.once("close", () => {
    hostLog.detach(socket);
    if (launcher !== socket) return;
    launcher = undefined;
    // The launcher was killed: so is its front (the clients it handed over stay here).
    if (!ending) started?.kill();
  });

  const start = async (command: FrontCommand) => {
    // The last front must be gone: it holds the port.
    await frontProcess?.exited;
    if (launcher !== socket || ending) return;
    frontLeaving = false;
    started = frontProcess = forkFront(command, socketPath!, {
      // Its URL line is its own launcher's (whose stdout carries nothing else); its log lines go wherever the host's go.
      stdout: (bytes) => launcher === socket && hostLog.stdout(bytes),
      stderrLine: (line) => hostLog.write(line),
      client: (client, handed) => acceptClient(client, handed, Buffer.from(handed.head, "base64")),
      // A socket it could not take: the front frees its place in the quotas.
      refused: (linkId) => front?.write(encodeFrame(FrameKind.Closed, String(linkId))),
      exit: (how) => {
        frontProcess = undefined;
        // Its launcher exits as the front did, and a new one may attach at once; the host's lines wait for it.
        hostLog.detach(socket);
        if (launcher === socket) launcher = undefined;
        socket.end(encodeFrame(FrameKind.Exit, JSON.stringify(how)));
        // A host of a port-0 daemon can never be found again (its address died with the front): it ends with its front.
        // Its clients' connections drop as they would with a daemon that died holding them.
        if (privateHost && !ending) endAndExit("its daemon is gone, and no other can find this host", { dropClients: true });
      },
    });
    for (const signal of early.splice(0)) passSignal(signal);
  };
  readFrames(socket, rest, LAUNCHER_FRAME_LIMIT_BYTES, onFrame, malformed("an execmux serve"));
}

/** Logs why a link is closed for a malformed frame. */
function malformed(who: string): (error: unknown) => void {
  return (error) => log.error({ err: error }, `${who} sent a malformed frame; its link is closed`);
}

/** The control link of the front this host forked (none other may attach). */
function acceptFront(socket: Socket, hello: Hello, rest: Buffer): void {
  if (front || ending || hello.pid === undefined || hello.pid !== frontProcess?.pid) {
    return refuse(socket, ending ? "this process host is shutting down" : "only the daemon this process host started may attach; start `execmux serve`");
  }
  front = socket;
  socket.write(encodeFrame(FrameKind.Hello, JSON.stringify(ourHello)));
  log.info("a daemon attached to the process host");
  socket.once("close", () => {
    front = undefined;
    frontLeaving = frontProcess !== undefined;
    if (ending) return;
    log.warn({ sessions: runtime.registry.size }, "the daemon left the process host; sessions keep running until one attaches again or they expire");
  });
  readFrames(socket, rest, HELLO_LIMIT_BYTES, (kind, payload) => {
    if (kind !== FrameKind.Request) return;
    const request = JSON.parse(payload.toString()) as ControlRequest;
    const reply = (body: Omit<ControlReply, "id">) => {
      if (!socket.destroyed) socket.write(encodeFrame(FrameKind.Reply, JSON.stringify({ id: request.id, ...body })));
    };
    answer(request).then(
      (result) => {
        reply({ result });
        // Told to shut down: every process is gone by now, and so is this host once the front and its launcher are.
        if (request.method === "shutdown") void exitAfterFront();
      },
      (error: Error) => reply({ error: error.message }),
    );
  }, malformed("the daemon"));
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
    case "adopt":
      return adoptClients();
  }
}

/**
 * The clients an earlier front handed over and that are still here, given
 * to the current front under new numbers (negative: its own count up), so
 * its per-client connection quota counts them and hears when they go.
 */
function adoptClients(): AdoptedClient[] {
  const adopted: AdoptedClient[] = [];
  for (const owner of clientOwners.values()) {
    if (owner.openedBy === front || owner.client === undefined) continue;
    owner.openedBy = front;
    owner.linkId = -(adopted.length + 1);
    adopted.push({ linkId: owner.linkId, client: owner.client });
  }
  return adopted;
}

/** A client's socket (handed over by the front) or its link (relayed by the front), its handshake done. */
function acceptClient(link: Socket, hello: Pick<Hello, "peer" | "linkId">, head: Buffer): void {
  if (ending) return void link.destroy();
  const socket = webSocketOverLink(link, head, webSocketOptions);
  // A client that reads nothing leaves its link paused behind its data, where
  // the front would never read the link's end: the end travels beside it, on
  // the control link of the front that counts the client (its numbers are its own).
  const owner: ClientOwner = { openedBy: front, linkId: hello.linkId, client: hello.peer?.client };
  socket.on("error", (error) => onClientSocketError(error, socket, log));
  clientOwners.set(socket, owner);
  socket.once("close", (code) => {
    clientOwners.delete(socket);
    // 1006: no close frame went through (ws terminated the socket: it stopped answering, or would not finish
    // closing), so the front drops it now; after a close handshake, what is queued may still flush.
    const kind = code === 1006 ? FrameKind.Terminate : FrameKind.Closed;
    if (owner.linkId !== undefined && front && front === owner.openedBy) front.write(encodeFrame(kind, String(owner.linkId)));
  });
  runtime.serveWebSocket(socket, hello.peer ?? { transport: "websocket" }, log);
}

/**
 * Every client link closed and no new one taken, every process tree
 * terminated (SIGTERM, the grace period, SIGKILL), this host's socket
 * removed. Never rejects: a host told to end ends.
 */
function end(why: string, { dropClients = false } = {}): Promise<void> {
  return (ending ??= (async () => {
    clearInterval(aloneTimer);
    log.info({ why }, "the process host is stopping");
    server.close();
    // A front still taking clients stops too (new WebSockets get 503); the one that asked ignores it.
    frontProcess?.signal("SIGTERM");
    // Told why, as an in-process daemon's clients are; whoever is still there after the processes are gone is cut off.
    for (const socket of clientOwners.keys()) dropClients ? socket.terminate() : socket.close(SHUTDOWN_CLOSE.code, SHUTDOWN_CLOSE.reason);
    removeOwnSocket();
    try {
      await runtime.close();
    } catch (error) {
      log.error({ err: error }, "shutting the sessions down failed");
    }
    for (const socket of clientOwners.keys()) socket.terminate();
  })());
}

/**
 * Exits once the front is gone (end() told it to stop; it is killed if it
 * does not) and its launcher heard how it ended, each bounded: a launcher
 * exits as its front did, and the port is free by then.
 */
async function exitAfterFront(): Promise<void> {
  const told = launcher && !launcher.destroyed ? new Promise((resolve) => launcher!.once("close", resolve)) : undefined;
  await settleWithin(frontProcess?.exited, FRONT_EXIT_WAIT_MS);
  if (frontProcess) {
    frontProcess.kill();
    await settleWithin(frontProcess?.exited, FRONT_EXIT_WAIT_MS);
  }
  // A launcher whose front never started hears it here; one whose front ended has had its Exit frame.
  launcher?.end(encodeFrame(FrameKind.Exit, JSON.stringify({ code: 0, signal: null })));
  await settleWithin(told, FRONT_EXIT_WAIT_MS);
  process.exit(0);
}

function endAndExit(why: string, how?: { dropClients: boolean }): void {
  void end(why, how).then(exitAfterFront);
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
  if (launcher || frontProcess || front || ending) return;
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
