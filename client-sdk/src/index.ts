export { connect, observe, ExecmuxClient, type ConnectOptions, type StartOptions, type GapEvent } from "./client.js";
export { listSessions, type ListSessionsOptions } from "./session-list.js";
export { backoffDelay, resolveReconnectOptions, type ReconnectOptions } from "./backoff.js";
export { ProcessHandle, type OutputEvent } from "./process-handle.js";
export {
  UnifiedExec,
  UnknownSessionIdError,
  toTextOutput,
  truncateMiddle,
  type ExecCommandParams,
  type ExecCommandOutput,
  type WriteStdinParams,
  type UnifiedExecOptions,
} from "./unified-exec.js";
export { ExecmuxError, RpcRequestError, DisconnectedError, RequestTimeoutError, SessionLostError, MessageTooLargeError } from "./errors.js";
export type { WebSocketLike, WebSocketConstructor, SocketOptions } from "./socket.js";
export { routerHeaders, type RouterRoute } from "./router-route.js";
export { decodeBase64, encodeBase64 } from "./base64.js";
export * from "@execmux/shared";
