/**
 * Finding or starting the native process host, up to a connected socket:
 * the first half of opening it (process-host.ts says hello over the
 * socket). On its own so that `execmux serve` can start the host before it
 * loads the rest of the daemon: the two take about as long, and a client's
 * first process waits for both.
 */
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import type { Readable } from "node:stream";
import type { Config } from "../config-schema.js";
import { hostBinary } from "./native-binary.js";
import { hostSocketPath, stateDirectory } from "./state-directory.js";

export interface LaunchOptions {
  /** Where a persistent host listens (and its crash log beside it); undefined: a private host. */
  readonly socketPath: string | undefined;
  readonly containment: "auto" | "cgroup" | "process-tree";
  readonly pidNamespace: "auto" | "on" | "off";
  /** A session's fork bound (pids.max of its cgroup); 0: none. */
  readonly pidsMax: number;
}

export interface LaunchedHost {
  readonly socket: Socket;
  /** This daemon started the host (else it found one running). */
  readonly started: boolean;
}

/**
 * Whether the host outlives this daemon: `execmux serve` on a fixed
 * address, which a restart with the same command finds again. A port-0
 * daemon, stdio and `--process-host in-process` keep a host of their own
 * that ends with them.
 */
export function persistentHost(config: Config): boolean {
  return config.processHost === "separate" && /^wss?:\/\//.test(config.listen) && !/:0\/?$/.test(config.listen);
}

/** How the daemon's configuration places its host. */
export function launchOptions(config: Config, persistent = persistentHost(config)): LaunchOptions {
  return {
    socketPath: persistent ? hostSocketPath(stateDirectory(config.stateDirectory), config.listen) : undefined,
    containment: config.processContainment,
    pidNamespace: config.spawnerPidNamespace,
    pidsMax: config.maxPidsPerSession,
  };
}

/** Reads the host's first line on its ready descriptor: "ready PID", or "busy" (another host serves this address). */
function readyLine(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const done = () => resolve(text.trim());
    stream.on("data", (data: Buffer) => {
      text += data.toString("latin1");
      if (text.includes("\n")) {
        stream.removeListener("end", done);
        stream.destroy();
        done();
      }
    });
    stream.once("end", done);
    stream.once("error", done);
  });
}

function connectSocket(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.removeListener("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/**
 * The host's environment: none. It needs none (every child gets the
 * environment its start asked for), and the host is its children's pid 1:
 * any of them could read the daemon's (its token among it) in /proc/1/environ.
 */
const HOST_ENVIRONMENT: NodeJS.ProcessEnv = {};

function hostArguments(options: LaunchOptions): string[] {
  return ["--containment", options.containment, "--pid-namespace", options.pidNamespace, "--pids-max", String(options.pidsMax)];
}

/** A private host, started now, or the persistent one at `socketPath` (started if none answers there). */
export async function launchHost(options: LaunchOptions): Promise<LaunchedHost> {
  const binary = hostBinary();
  if (options.socketPath === undefined) {
    const child = spawn(binary, ["--fd", "3", "--ready-fd", "4", ...hostArguments(options)], { stdio: ["ignore", "ignore", "inherit", "pipe", "pipe"], env: HOST_ENVIRONMENT });
    child.on("error", () => undefined);
    const socket = child.stdio[3] as Socket;
    const ready = await readyLine(child.stdio[4] as Readable);
    if (!ready.startsWith("ready")) throw new Error(`the process host did not start (${binary})`);
    child.unref();
    return { socket, started: true };
  }
  const path = options.socketPath;
  try {
    return { socket: await connectSocket(path), started: false };
  } catch {
    // None answers: start one (another daemon may be starting one too: then ours says "busy" and we connect to theirs).
    // Until it holds its address's lock the host writes to our stderr; from then on to `${path}.log` (address.h).
    const child = spawn(binary, ["--socket", path, "--ready-fd", "3", ...hostArguments(options)], { detached: true, stdio: ["ignore", "ignore", "inherit", "pipe"], env: HOST_ENVIRONMENT });
    child.on("error", () => undefined);
    const ready = await readyLine(child.stdio[3] as Readable);
    child.unref();
    if (!ready.startsWith("ready") && ready !== "busy") throw new Error(`the process host did not start (${binary}; see ${path}.log)`);
    return { socket: await connectSocket(path), started: ready.startsWith("ready") };
  }
}
