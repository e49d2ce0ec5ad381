/**
 * How the daemon and its spawner process (spawner-main.ts) talk: requests,
 * reports and exits over Node's IPC channel; each child's stdio as a Unix
 * socket connection from the spawner to the daemon's stdio listener, which
 * starts with a fixed header naming the spawn and the descriptor.
 *
 * Not Node's handle passing: it sends one handle per message and waits for
 * the receiver's acknowledgement before sending anything else, so under load
 * (a hundred starts at once) every start waited for three round trips behind
 * every other one, and a handle still in flight kept the helper from
 * noticing the daemon's death.
 */
import { timingSafeEqual } from "node:crypto";

export interface SpawnRequest {
  readonly type: "spawn";
  readonly id: number;
  readonly file: string;
  readonly args: readonly string[];
  /** argv[0] as the program sees it. */
  readonly argv0: string | undefined;
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** Whether stdin is a pipe (else /dev/null); stdout and stderr always are. */
  readonly pipeStdin: boolean;
}

export type SpawnerMessage =
  /** Sent once every stdio connection of the child was made (they may still be in the daemon's accept queue). */
  | { readonly type: "spawned"; readonly id: number; readonly pid: number }
  | { readonly type: "failed"; readonly id: number; readonly code: string; readonly message: string }
  | { readonly type: "exit"; readonly id: number; readonly code: number | null; readonly signal: NodeJS.Signals | null };

export type StdioFd = 0 | 1 | 2;

/** The listener's address and the secret every connection must start with. */
export interface StdioEndpoint {
  readonly path: string;
  readonly secret: Buffer;
}

export const SECRET_BYTES = 16;
/** secret, spawn id (u32), fd (u8). */
export const STDIO_HEADER_BYTES = SECRET_BYTES + 5;

export function encodeStdioHeader(secret: Buffer, id: number, fd: StdioFd): Buffer {
  const header = Buffer.alloc(STDIO_HEADER_BYTES);
  secret.copy(header, 0);
  header.writeUInt32BE(id, SECRET_BYTES);
  header.writeUInt8(fd, SECRET_BYTES + 4);
  return header;
}

/** Undefined for a header that does not carry the secret or names no stdio descriptor. */
export function decodeStdioHeader(secret: Buffer, header: Buffer): { id: number; fd: StdioFd } | undefined {
  if (header.length !== STDIO_HEADER_BYTES || !timingSafeEqual(header.subarray(0, SECRET_BYTES), secret)) return undefined;
  const fd = header.readUInt8(SECRET_BYTES + 4);
  if (fd > 2) return undefined;
  return { id: header.readUInt32BE(SECRET_BYTES), fd: fd as StdioFd };
}

/** The helper's environment variable naming the endpoint (children get the environment their start asked for, not this). */
export const ENDPOINT_ENV = "EXECMUX_SPAWNER_STDIO_ENDPOINT";
/** Both hex: an abstract socket's path starts with a NUL, which no environment variable can hold. */
export const encodeEndpoint = (endpoint: StdioEndpoint) => `${endpoint.secret.toString("hex")}:${Buffer.from(endpoint.path).toString("hex")}`;
export function decodeEndpoint(text: string): StdioEndpoint {
  const [secret = "", path = ""] = text.split(":");
  return { secret: Buffer.from(secret, "hex"), path: Buffer.from(path, "hex").toString() };
}
