import type { ConnectionPort } from "./connection-port.js";
import type { ConnectionResources } from "../rpc/connection-resources.js";
import type { Session } from "../session/session.js";

export interface HandlerContext {
  readonly connection: ConnectionPort;
  /** Undefined only for `initialize`; dispatch checks the handshake for everything else. */
  readonly session: Session | undefined;
  /** Whether this request carried `"jsonrpc": "2.0"`. */
  readonly jsonrpc: boolean;
  /** Runs `task` right after this request's reply is sent (before any other event). */
  afterReply(task: () => void): void;
  /** Aborted when the connection closes: long waits and streams stop. */
  readonly signal: AbortSignal;
  /** Per-connection state of a method family, disposed when the connection closes. */
  readonly resources: ConnectionResources;
  /** A notification on this connection, in the client's dialect, queued behind earlier replies. */
  notify(method: string, params: unknown): void;
  /**
   * Resolves once the connection's unsent data is below its bound (at once
   * when it already is, or when the connection closed): a producer that
   * awaits it between notifications cannot outrun a client that stopped
   * reading.
   */
  whenWritable(): Promise<void>;
  /**
   * Bytes this request's reply may take before the connection's replies
   * not yet taken by the client pass --reply-queue-bytes. A handler whose
   * reply can be large answers with less (as a `maxBytes` would) when the
   * client is not reading.
   */
  replyRoomBytes(): number;
  /** Counts `bytes` of the reply being built against that bound until it is queued. */
  reserveReply(bytes: number): void;
  /**
   * Counts `bytes` against that bound until the returned release is called:
   * for a reply whose size is known only once the process host answers, so
   * requests that arrive meanwhile see the room it may take.
   */
  holdReplyRoom(bytes: number): () => void;
  /**
   * Resolves once a reply of `bytes` fits in that bound (one larger than
   * the room left: once at most half the bound is owed, so one such reply
   * at a time), or the connection closed. A handler awaits it, then reserves, before it
   * builds a large reply, so replies a client does not take never add up.
   */
  whenReplyRoom(bytes: number): Promise<void>;
  /**
   * Calls `release` once this request's reply has been written to the
   * socket, or could not be (the connection closed): memory a reply holds
   * stays charged to its budget (budgets/) for as long as the daemon holds it.
   */
  holdUntilSent(release: () => void): void;
}

export interface SessionContext extends HandlerContext {
  readonly session: Session;
}

/** The process family's context: a session is always there. */
export type ProcessContext = SessionContext;
