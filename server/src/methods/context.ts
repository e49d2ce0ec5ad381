import type { Connection } from "../rpc/connection.js";
import type { Session } from "../session/session.js";

export interface HandlerContext {
  readonly connection: Connection;
  /** Undefined only for `initialize`; dispatch checks the handshake for everything else. */
  readonly session: Session | undefined;
  /** Whether this request carried `"jsonrpc": "2.0"`. */
  readonly jsonrpc: boolean;
  /** Runs `task` right after this request's reply is sent (before any other event). */
  afterReply(task: () => void): void;
}

export interface ProcessContext extends HandlerContext {
  readonly session: Session;
}
