/**
 * Message envelopes. Upstream neither sends nor requires `"jsonrpc": "2.0"`;
 * generic JSON-RPC 2.0 clients require it. The daemon answers in whichever
 * dialect the client used, so both work.
 */
import type { RpcErrorBody } from "./errors.js";

export type RequestId = number | string;

export interface RequestMessage {
  jsonrpc?: "2.0";
  id: RequestId;
  method: string;
  params?: unknown;
}

export interface NotificationMessage {
  jsonrpc?: "2.0";
  method: string;
  params?: unknown;
}

export interface SuccessResponse {
  jsonrpc?: "2.0";
  id: RequestId;
  result: unknown;
}

export interface ErrorResponse {
  jsonrpc?: "2.0";
  id: RequestId | null;
  error: RpcErrorBody;
}

export type ResponseMessage = SuccessResponse | ErrorResponse;
export type IncomingServerMessage = ResponseMessage | NotificationMessage;

/** The id upstream puts on the error reply to a frame that is not JSON. */
export const MALFORMED_MESSAGE_ID = -1;
