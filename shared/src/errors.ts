/**
 * Every error code the daemon can put in a JSON-RPC error, in one place.
 * The first six are upstream's (Codex exec-server); the rest are execmux
 * extensions and only ever reach clients that used the feature behind them.
 */
export const ErrorCode = {
  /** Malformed JSON (reply id is -1), a message that is not a request, handshake
   * order violated, unknown process or session id, duplicate process id; an
   * fs/* call refused as invalid input or denied permission. */
  InvalidRequest: -32600,
  /** The method does not exist. */
  MethodNotFound: -32601,
  /** Params failed schema validation (ajv's message is in `data`), or a value
   * is semantically wrong: empty argv, relative or missing cwd, unknown signal,
   * a bad http/request method, URL or header, a streamed requestId in use. */
  InvalidParams: -32602,
  /** The daemon could not do what was asked: spawn failed, write failed, an
   * http/request could not be sent, timed out, or its body could not be read,
   * any other filesystem error. */
  InternalError: -32603,
  /** An fs/* call named a path that does not exist (Rust's io::ErrorKind::NotFound)
   * or an unknown file handle. Codex maps it back to NotFound. */
  NotFound: -32004,
  /** `initialize {resumeSessionId}` named a session that another live
   * connection holds. */
  SessionAttached: -32010,
  /** A configured limit was hit; `data.limit` names it. Nothing running was harmed. */
  LimitExceeded: -32011,
  /** The connection that issued the request lost its session: it was taken
   * over by another connection or the daemon is shutting down. */
  ConnectionClosed: -32012,
  /** The connection observes a session (`initialize {observeSessionId}`):
   * it may read, never write, signal, start, resize, or use fs/* or http/*. */
  ObserverReadOnly: -32013,
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The `error` member of a JSON-RPC error response. */
export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

/** WebSocket close codes of execmux's own (4000-4999 is the application range). */
export const CloseCode = {
  /** Another connection took this socket's session over (initialize with resume and takeover); a client must not reconnect to it. */
  SessionTakenOver: 4001,
  /** The session an observer followed ended (it expired): nothing more will come. */
  ObservedSessionEnded: 4003,
} as const;
