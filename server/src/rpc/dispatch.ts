/**
 * From a request's method name to its handler: unknown method (-32601),
 * params against the method's schema (-32602), handshake order (-32600,
 * upstream's message per method family), then, on an observer's connection,
 * whether an observer may call it (-32013).
 */
import { ErrorCode } from "@execmux/shared/errors";
import type { RequestMethod } from "@execmux/shared";
import { methods } from "../generated/methods.js";
import { handlerOf, type HandlerContext } from "../methods/index.js";
import type { Connection } from "./connection.js";
import { RpcError } from "./rpc-error.js";
import { validateParams } from "./validators.js";

/** What a handler needs besides the connection and session; built by the connection per request. */
export type RequestScope = Omit<HandlerContext, "connection" | "session">;

export async function dispatch(connection: Connection, method: string, params: unknown, scope: RequestScope): Promise<unknown> {
  if (!Object.hasOwn(methods, method)) {
    throw new RpcError(ErrorCode.MethodNotFound, `exec-server stub does not implement \`${method}\` yet`);
  }
  // Absent params are `null`, as upstream decodes them (`invalid type: null, expected struct
  // ReadParams`); execmux's own extensions, which upstream lacks, take them as `{}`.
  const spec = methods[method as RequestMethod];
  const checked = params ?? (spec.extension ? {} : null);
  // Upstream decodes params before it looks at the handshake.
  await validateParams(method as RequestMethod, checked);
  const family = spec.family;
  const session = family === null ? undefined : connection.requireInitialized(family);
  connection.assertMayCall(method as RequestMethod);
  const found = handlerOf(method as RequestMethod);
  const handler = typeof found === "function" ? found : await found;
  return handler(checked, { connection, session, ...scope });
}
