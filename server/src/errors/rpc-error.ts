/**
 * An error that carries its protocol code (shared/src/errors.ts) from wherever
 * it is thrown (a session, the sandbox, a budget) to the RPC edge, which
 * sends it as it is. Below every layer, so any of them may throw one.
 */
// Not the package's index: this module is imported by the confined helper
// (fs/write-operations.ts), where loading every schema would double its start.
import { ErrorCode } from "@execmux/shared/errors";
import type { RpcErrorBody } from "@execmux/shared";

/** Anything a handler throws as an RpcError reaches the client as-is; any
 * other exception becomes an InternalError. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }

  toBody(): RpcErrorBody {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export const invalidRequest = (message: string) => new RpcError(ErrorCode.InvalidRequest, message);
export const invalidParams = (message: string, data?: unknown) =>
  new RpcError(ErrorCode.InvalidParams, message, data);
export const internalError = (message: string, data?: unknown) => new RpcError(ErrorCode.InternalError, message, data);
export const unknownProcess = (processId: string) => invalidRequest(`unknown process id ${processId}`);
/** Work given up because its connection closed (the reply has nowhere to go). */
export const connectionClosed = () => new RpcError(ErrorCode.ConnectionClosed, "the connection closed");
export const limitExceeded = (limit: string, message: string) =>
  new RpcError(ErrorCode.LimitExceeded, message, { limit });
