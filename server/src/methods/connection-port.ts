/**
 * What a method handler may ask of the connection it answers on
 * (rpc/connection.ts implements it). Handlers see this, not the class:
 * methods/ never imports rpc/connection.ts, which dispatches to methods/,
 * so imports flow one way.
 */
import type { Caller } from "../session/session-registry.js";
import type { Session, SessionSink } from "../session/session.js";
import type { ConnectionDeps } from "../rpc/connection-deps.js";
import type { ObserverLink, ObserverPort } from "../rpc/observer-link.js";

export interface ConnectionPort extends SessionSink {
  readonly deps: ConnectionDeps;
  /** The session this connection holds or observes, once initialized. */
  readonly session: Session | undefined;
  /** The connection's identity key: who owns the sessions it creates, and whose quotas count them. */
  readonly client: string;
  /** Who is asking, for what the registry lets it see and observe. */
  readonly caller: Caller;
  /** Aborted when the socket closes. */
  readonly closedSignal: AbortSignal;
  /** The daemon's port this client came in on, if it came over TCP. */
  readonly daemonPort: number | undefined;
  /** Throws once the connection's session was taken over by another connection. */
  assertNotEvicted(): void;
  beginInitialize(jsonrpc: boolean): void;
  abandonInitialize(): void;
  bindSession(session: Session): void;
  observerPort(): ObserverPort;
  bindObserved(session: Session, link: ObserverLink): (cursors: Readonly<Record<string, number>>) => void;
  /** Marks a long-poll under way; the returned function ends it. */
  beginLongPoll(): () => void;
  configureOutput(options: { binaryOutput?: boolean | null; ackWindowBytes?: number | null }): { ackWindowBytes: number; sharedAckWindowBytes: number } | undefined;
  /** Credit flow control: the client consumed `bytes` of a process's output. */
  ack(processId: string, bytes: number): void;
  /** Replays each process's retained events after its cursor, paced by the socket. */
  replay(session: Session, cursors: Readonly<Record<string, number>>): void;
}
