/**
 * From a request's method name to its handler: unknown method (-32601),
 * handshake order (-32600), then params against the method's schema (-32602).
 */
import { ErrorCode, isRequestMethod } from "@execmux/shared";
import { handlers, type HandlerContext } from "../methods/index.js";
import type { Connection } from "./connection.js";
import { RpcError } from "./rpc-error.js";
import { validateParams } from "./validators.js";

export async function dispatch(
  connection: Connection,
  method: string,
  params: unknown,
  jsonrpc: boolean,
  afterReply: (() => void)[],
): Promise<unknown> {
  if (!isRequestMethod(method)) throw new RpcError(ErrorCode.MethodNotFound, `unknown method ${method}`);
  const session = method === "initialize" ? undefined : connection.requireInitialized();
  const checked = params ?? {};
  validateParams(method, checked);
  const context: HandlerContext = { connection, session, jsonrpc, afterReply: (task) => afterReply.push(task) };
  const handler = handlers[method] as (params: unknown, context: HandlerContext) => unknown;
  return handler(checked, context);
}
