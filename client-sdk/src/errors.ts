import type { RpcErrorBody } from "@execmux/shared";

/** Base class of every error the SDK throws. */
export class ExecmuxError extends Error {
  override name = "ExecmuxError";
}

/** The daemon answered with a JSON-RPC error; `code` is one of the shared ErrorCode values. */
export class RpcRequestError extends ExecmuxError {
  override name = "RpcRequestError";
  readonly code: number;
  readonly data: unknown;
  /** The daemon's message as it sent it (`message` adds the method and code). */
  readonly rpcMessage: string;
  constructor(
    readonly method: string,
    body: RpcErrorBody,
  ) {
    super(`${method}: ${body.message} (${body.code})`);
    this.code = body.code;
    this.data = body.data;
    this.rpcMessage = body.message;
  }
}

/** The socket closed while the request was in flight; whether it took effect is unknown. */
export class DisconnectedError extends ExecmuxError {
  override name = "DisconnectedError";
}

/** No reply within the request's timeout. */
export class RequestTimeoutError extends ExecmuxError {
  override name = "RequestTimeoutError";
}

/** The session is gone (expired while disconnected, or reconnecting gave up):
 * its processes can no longer be followed. */
export class SessionLostError extends ExecmuxError {
  override name = "SessionLostError";
}

/**
 * A request's message was larger than the daemon accepts (its
 * `--max-message-bytes`): the daemon closed the socket with 1009. Such a
 * request is never sent again, and later ones at least as large fail at once.
 */
export class MessageTooLargeError extends ExecmuxError {
  override name = "MessageTooLargeError";
  constructor(
    readonly method: string,
    readonly bytes: number,
  ) {
    super(
      `${method}: the message (${bytes} bytes) is larger than the daemon accepts (its --max-message-bytes); ` +
        "send the data in smaller pieces",
    );
  }
}
