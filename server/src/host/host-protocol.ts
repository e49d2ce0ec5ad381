/**
 * What the front and the process host say to each other besides a client's
 * own messages: the hello that opens every link, the control requests, and
 * where the host's socket lives.
 *
 * Versions: each side sends the newest link version it speaks and the
 * oldest it still accepts; they speak the older of the two newest, and
 * refuse when that is below either side's oldest. A front of a newer execmux can so take over a host started by an
 * older one as long as their ranges meet; when they do not, the front says
 * which versions met and stops, and the host keeps every process running.
 */
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Config } from "../config.js";
import { resolveStateDirectory, stateDirectoryPath } from "../state/state-directory.js";
import type { PeerDescription } from "../rpc/connection.js";

/**
 * The link protocol this execmux speaks, and the oldest it still accepts.
 * 2: a client's link carries its WebSocket bytes as they are (1 carried
 * each message in a frame of its own).
 * 3: `execmux serve` is a launcher, and the host forks the daemon that
 * listens on the port (the front), which hands it each client's socket.
 */
export const LINK_VERSION = 3;
export const MIN_LINK_VERSION = 3;

/**
 * How a host starts a launcher's front: that execmux's own node, script and
 * command line, in the launcher's directory and environment. A newer
 * execmux's launcher so gets a front of its own version (an upgrade).
 */
export interface FrontCommand {
  readonly execPath: string;
  readonly execArgv: readonly string[];
  /** The execmux CLI script (cli.js). */
  readonly script: string;
  /** `execmux serve`'s arguments. */
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

/** The signals a daemon answers (stop, reload tokens, hand over): `execmux serve` passes them on to its front. */
export const PASSED_ON_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP", "SIGUSR2"] as const;

/** How a front ended, as its launcher is told (the last frame on its link). */
export interface FrontExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** In a front's environment, the socket of the process host that forked it (with an IPC channel to hand sockets over). */
export const FRONT_ENV = "EXECMUX_FRONT_OF_HOST";

/** A front's IPC message once its signal handlers are in: signals the launcher passed on wait until then. */
export interface FrontReady {
  readonly kind: "ready";
}

/** A front's IPC message that comes with a client's socket (child_process's handle passing). */
export interface HandedClient {
  readonly kind: "client";
  readonly peer: PeerDescription;
  readonly linkId: number;
  /** Bytes the front read from the socket before handing it over (base64): they go first. */
  readonly head: string;
}

export interface Hello {
  readonly role: "launcher" | "control" | "client" | "host";
  readonly linkVersion: number;
  readonly minLinkVersion: number;
  readonly execmuxVersion: string;
  /** The sender's pid (the host's, a launcher's, a control link's front's), so an operator can find it. */
  readonly pid?: number;
  /** A client link: who the client is (address, quota key). */
  readonly peer?: PeerDescription;
  /** A client link: the front's number for it, by which the host can have it terminated over the control link. */
  readonly linkId?: number;
  /** The host's settings (without secrets): a front started with others says which of its own do not apply. */
  readonly config?: Record<string, unknown>;
}

/** Settings a host may show a front: everything but the token (the front alone checks it). */
export function shareableConfig(config: Config): Record<string, unknown> {
  return { ...config, token: "" };
}

/** The settings the host runs with that differ from the front's, by name; the front's only govern HTTP and auth. */
export function settingsNotApplied(front: Config, host: Record<string, unknown> | undefined): string[] {
  if (!host) return [];
  const mine = shareableConfig(front);
  // A host found in the state directory shares it; it carries the directory resolved, the front maybe the default "".
  return Object.keys(mine).filter((key) => key !== "stateDirectory" && key in host && JSON.stringify(mine[key]) !== JSON.stringify(host[key]));
}

/** The link version two hellos agree on, or undefined when their ranges do not meet. */
export function agreedVersion(ours: Pick<Hello, "linkVersion" | "minLinkVersion">, theirs: Pick<Hello, "linkVersion" | "minLinkVersion">): number | undefined {
  const version = Math.min(ours.linkVersion, theirs.linkVersion);
  return version >= Math.max(ours.minLinkVersion, theirs.minLinkVersion) ? version : undefined;
}

/** adopt: the clients earlier fronts handed over, for this one's connection quota (AdoptedClient[]). */
export type ControlMethod = "metrics" | "ready" | "shutdown" | "adopt";

/** A client the host holds that an earlier front handed over: its number for this front, and its quota key. */
export interface AdoptedClient {
  readonly linkId: number;
  readonly client: string;
}

export interface ControlRequest {
  readonly id: number;
  readonly method: ControlMethod;
}

export interface ControlReply {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

/** The host's settings travel in this environment variable (JSON), its socket's path in the next. */
export const HOST_CONFIG_ENV = "EXECMUX_HOST_CONFIG";
export const HOST_SOCKET_ENV = "EXECMUX_HOST_SOCKET";
/** Set to "1" for the host of a daemon nobody can find again (port 0): it ends with that daemon. */
export const HOST_PRIVATE_ENV = "EXECMUX_HOST_PRIVATE";

/**
 * The private directory the hosts' sockets live in (state/state-directory.ts
 * says where and what makes it private), made if missing. Places passed
 * over, and a fallback a later daemon cannot find, are warned about.
 */
export function stateDirectory(configured: string): string {
  const { path, stable, passedOver } = resolveStateDirectory(configured);
  if (passedOver.length > 0) {
    const consequence = stable ? "" : `; using ${path}, which a later \`execmux serve\` will not find (choose one with --state-directory)`;
    process.emitWarning(`state directory: passed over ${passedOver.join("; ")}${consequence}`, { code: "EXECMUX_STATE_DIRECTORY" });
  }
  return path;
}

export { stateDirectoryPath };

/**
 * The host socket of a daemon identity: one per listen address, so the same
 * `execmux serve` command finds its host again. Port 0 picks a new port at
 * every start, so nobody could find that daemon again anyway: its host is
 * private to the one front.
 */
export function hostSocketPath(directory: string, listen: string): { path: string; reusable: boolean } {
  const reusable = !/:0\/?$/.test(listen);
  const identity = reusable ? listen : `${listen}#${process.pid}-${randomBytes(6).toString("hex")}`;
  return { path: join(directory, `host-${createHash("sha256").update(identity).digest("hex").slice(0, 16)}.sock`), reusable };
}
