/**
 * Links to the process host (host-main.ts): finding the host of a listen
 * address by its socket, or starting one (the launcher, launcher.ts); the
 * hello both sides say; and the front's control link for its own requests,
 * with one link per client connection that cannot be handed over (TLS).
 */
import { spawn } from "node:child_process";
import { closeSync, linkSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import type { Config } from "../config.js";
import { withoutDaemonSettings } from "../process/env-policy.js";
import type { PeerDescription } from "../rpc/connection.js";
import { EXECMUX_VERSION } from "../version.js";
import {
  agreedVersion,
  HOST_CONFIG_ENV,
  HOST_PRIVATE_ENV,
  HOST_SOCKET_ENV,
  hostSocketPath,
  LINK_VERSION,
  MIN_LINK_VERSION,
  shareableConfig,
  stateDirectory,
  type ControlMethod,
  type ControlReply,
  type FrontExit,
  type Hello,
} from "./host-protocol.js";
import { encodeFrame, FrameKind, readFrames } from "./link-frames.js";
import { isAlive } from "../process/is-alive.js";

const HOST_MAIN = fileURLToPath(new URL("./host-main.js", import.meta.url));
/** How long a new host may take to listen (it starts its spawner first). */
const HOST_START_TIMEOUT_MS = 30_000;
const CONNECT_RETRY_MS = 20;
/**
 * The host is this front's own kind and trusted; the bound only stops a
 * corrupt stream from growing the heap. The largest frame is a metrics reply.
 */
const HOST_FRAME_LIMIT_BYTES = 16 * 1024 * 1024;

export interface HostClient {
  /** The host's hello: its pid, its execmux version. */
  readonly hello: Hello;
  /** Opens a link for one client connection; `linkId` names it in the host's out-of-band terminates. */
  openClientLink(peer: PeerDescription, linkId: number): Promise<Socket>;
  /**
   * The host is done with a client link: "closed" (its WebSocket closed there;
   * what is queued may flush for a while) or "terminate" (drop it now: it
   * stopped answering pings).
   */
  onClientEnd(listener: (linkId: number, how: "closed" | "terminate") => void): void;
  request(method: ControlMethod): Promise<unknown>;
  /** Resolves if the control link closes while this front still needs it: the host is gone. */
  readonly lost: Promise<void>;
  /** Closes the control link; the host keeps its sessions (a restart or an upgrade). */
  detach(): void;
}

function connectTo(path: string): Promise<Socket | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      // No host there (never started, or died and left its socket behind).
      if (error.code === "ENOENT" || error.code === "ECONNREFUSED") resolve(undefined);
      else reject(error);
    });
  });
}

/** Waits until the host at `path` accepts a connection, as long as `failure` says nothing went wrong. */
async function awaitListening(path: string, failure: () => string | undefined): Promise<Socket> {
  const deadline = Date.now() + HOST_START_TIMEOUT_MS;
  for (;;) {
    const socket = await connectTo(path);
    if (socket) return socket;
    const failed = failure();
    if (failed) throw new Error(failed);
    if (Date.now() > deadline) throw new Error(`the process host did not listen on ${path} within ${HOST_START_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, CONNECT_RETRY_MS));
  }
}

/**
 * Two daemons started at once for one address must not both start a host
 * (the second would unlink the first one's socket): whoever creates the lock
 * file starts it, the other waits for it to listen. A lock whose owner died
 * is taken over.
 */
async function launchHost(config: Config, path: string, reusable: boolean): Promise<Socket> {
  const lockPath = path.replace(/\.sock$/, ".lock");
  for (;;) {
    if (takeLock(lockPath)) break;
    const owner = lockOwner(lockPath);
    if (owner === "gone") continue; // released meanwhile: try again
    if (owner !== "stale") {
      return awaitListening(path, () => (isAlive(owner) ? undefined : `the daemon (pid ${owner}) that was starting the process host at ${path} is gone; try again`));
    }
    rmSync(lockPath, { force: true });
  }
  try {
    // The lock's last holder may have started a host just before letting go.
    return (await connectTo(path)) ?? (await startHostProcess(config, path, reusable));
  } finally {
    rmSync(lockPath, { force: true });
  }
}

/** Creates the lock with this process's pid in it, whole or not at all (a reader never sees it empty). */
function takeLock(lockPath: string): boolean {
  const draft = `${lockPath}.${process.pid}`;
  writeFileSync(draft, String(process.pid), { mode: 0o600 });
  try {
    linkSync(draft, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return false;
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * Who holds the lock: a live pid, "gone" (released since), or "stale": its
 * owner died, or it is this very process's pid (a container restarted with
 * the same pid), or it is older than any start could take.
 */
function lockOwner(lockPath: string): number | "gone" | "stale" {
  try {
    const owner = Number(readFileSync(lockPath, "latin1"));
    const age = Date.now() - statSync(lockPath).mtimeMs;
    if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || !isAlive(owner) || age > 2 * HOST_START_TIMEOUT_MS) return "stale";
    return owner;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw error;
  }
}

/** Starts a host for `path` and resolves with a connected socket once it listens. */
async function startHostProcess(config: Config, path: string, reusable: boolean): Promise<Socket> {
  rmSync(path, { force: true }); // a dead host's socket
  const logPath = path.replace(/\.sock$/, ".log");
  // The host's own stdout and stderr (a crash before its logger exists); its log lines come over the launcher's link.
  const logFd = openSync(logPath, "w", 0o600);
  const child = spawn(process.execPath, [...process.execArgv, HOST_MAIN], {
    detached: true,
    stdio: ["ignore", logFd, logFd],
    // The host's own environment has no token; the front's comes from its launcher (launcher.ts).
    env: { ...withoutDaemonSettings(process.env), [HOST_CONFIG_ENV]: JSON.stringify(shareableConfig(config)), [HOST_SOCKET_ENV]: path, [HOST_PRIVATE_ENV]: reusable ? "0" : "1" },
  });
  closeSync(logFd);
  child.unref();
  let exited: string | undefined;
  const onExit = (code: number | null, signal: NodeJS.Signals | null) => (exited = `the process host exited (${signal ?? `code ${code}`}) before it listened: ${tail(logPath)}`);
  const onError = (error: Error) => (exited = `cannot start the process host: ${error.message}`);
  child.once("exit", onExit);
  child.once("error", onError);
  try {
    return await awaitListening(path, () => exited);
  } catch (error) {
    child.kill("SIGKILL"); // it may still be starting: a host nobody will attach to must not linger
    throw error;
  } finally {
    child.off("exit", onExit);
    child.off("error", onError);
  }
}

/** The last lines of a file, for an error message; empty when it cannot be read. */
function tail(path: string): string {
  try {
    return readFileSync(path, "utf8").slice(-2_000).trim();
  } catch {
    return "";
  }
}

function hello(role: Hello["role"], extra: Pick<Hello, "peer" | "linkId"> = {}): Buffer {
  const body: Hello = { role, linkVersion: LINK_VERSION, minLinkVersion: MIN_LINK_VERSION, execmuxVersion: EXECMUX_VERSION, pid: process.pid, ...extra };
  return encodeFrame(FrameKind.Hello, JSON.stringify(body));
}

/** What the host sends on a control or launcher link besides its hello; each link hears only some. */
export interface LinkEvents {
  /** A line for stderr (the host's or the front's log). */
  log?(line: Buffer): void;
  /** Bytes the front wrote on its stdout. */
  stdout?(bytes: Buffer): void;
  /** How the front ended: the last frame on a launcher link. */
  exit?(how: FrontExit): void;
  reply?(reply: ControlReply): void;
  /** A client link is done with, or must be dropped at once (its own link may be paused behind data). */
  clientEnd?(linkId: number, how: "closed" | "terminate"): void;
}

/** Reads a control or launcher link; resolves with the host's hello, or rejects with its refusal. */
function readLink(socket: Socket, events: LinkEvents): Promise<Hello> {
  return new Promise((resolve, reject) => {
    let greeted = false;
    // A host that sends garbage is as good as gone: its link is closed.
    readFrames(socket, Buffer.alloc(0), HOST_FRAME_LIMIT_BYTES, (kind, payload) => {
      switch (kind) {
        case FrameKind.Log:
          return events.log?.(payload);
        case FrameKind.Stdout:
          return events.stdout?.(payload);
        case FrameKind.Exit:
          return events.exit?.(JSON.parse(payload.toString()) as FrontExit);
        case FrameKind.Terminate:
          return events.clientEnd?.(Number(payload.toString()), "terminate");
        case FrameKind.Closed:
          return events.clientEnd?.(Number(payload.toString()), "closed");
      }
      const body = JSON.parse(payload.toString()) as Hello & ControlReply;
      if (kind === FrameKind.Hello && !greeted) {
        greeted = true;
        return resolve(body);
      }
      if (kind === FrameKind.Reply) (greeted ? (reply: ControlReply) => events.reply?.(reply) : (reply: ControlReply) => reject(new Error(reply.error)))(body);
    });
    socket.once("close", () => greeted || reject(new Error("the process host closed the link before it said hello")));
  });
}

/**
 * Says hello as `role` on a link to the host and waits for the host's;
 * refuses a host whose link versions do not meet this execmux's, by name.
 */
export async function greetHost(socket: Socket, path: string, role: "launcher" | "control", events: LinkEvents): Promise<Hello> {
  socket.on("error", () => undefined); // "close" follows
  socket.write(hello(role));
  const host = await readLink(socket, events);
  if (agreedVersion({ linkVersion: LINK_VERSION, minLinkVersion: MIN_LINK_VERSION }, host) === undefined) {
    socket.destroy();
    throw new Error(
      `the process host at ${path} (pid ${host.pid}, execmux ${host.execmuxVersion}) speaks link versions ${host.minLinkVersion}-${host.linkVersion}, ` +
        `this execmux ${MIN_LINK_VERSION}-${LINK_VERSION}; its processes keep running. Start the execmux that started it, or stop that host (kill -TERM ${host.pid}, which ends its processes).`,
    );
  }
  return host;
}

/** The host of this listen address, found by its socket or started now. */
export async function connectHost(config: Config): Promise<{ socket: Socket; path: string; started: boolean }> {
  const directory = stateDirectory(config.stateDirectory);
  const { path, reusable } = hostSocketPath(directory, config.listen);
  const found = reusable ? await connectTo(path) : undefined;
  if (found) return { socket: found, path, started: false };
  // The host is told the directory chosen (a default may have been passed over), so it hides that one from sandboxes.
  return { socket: await launchHost({ ...config, stateDirectory: directory }, path, reusable), path, started: true };
}

/** The front's control link to the host that forked it at the launcher's request (launcher.ts); `path`: the host's socket. */
export async function attachHost(path: string): Promise<HostClient> {
  const control = await connectTo(path);
  if (!control) throw new Error(`the process host that started this daemon is gone (no socket at ${path})`);
  let nextId = 1;
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const clientEndListeners: ((linkId: number, how: "closed" | "terminate") => void)[] = [];
  const host = await greetHost(control, path, "control", {
    reply: (reply) => {
      const request = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (reply.error !== undefined) request?.reject(new Error(reply.error));
      else request?.resolve(reply.result);
    },
    clientEnd: (linkId, how) => {
      for (const listener of clientEndListeners) listener(linkId, how);
    },
  });
  let detached = false;
  const lost = new Promise<void>((resolve) =>
    control.once("close", () => {
      for (const request of waiting.values()) request.reject(new Error("the process host is gone"));
      waiting.clear();
      if (!detached) resolve();
    }),
  );
  return {
    hello: host,
    lost,
    request: (method) =>
      new Promise((resolve, reject) => {
        if (control.destroyed) return reject(new Error("the process host is gone"));
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        control.write(encodeFrame(FrameKind.Request, JSON.stringify({ id, method })));
      }),
    openClientLink: async (peer, linkId) => {
      const link = await connectTo(path);
      if (!link) throw new Error("the process host is gone");
      link.write(hello("client", { peer, linkId }));
      return link;
    },
    onClientEnd: (listener) => void clientEndListeners.push(listener),
    detach: () => {
      detached = true;
      control.end();
    },
  };
}
