/**
 * From a request's method name to its handler: unknown method (-32601),
 * params against the method's schema (-32602), handshake order (-32600,
 * upstream's message per method family), then, on an observer's connection,
 * whether an observer may call it (-32013).
 */
import { ErrorCode } from "@execmux/shared/errors";
import type { MethodFamily, RequestMethod } from "@execmux/shared";
import { methods } from "../generated/methods.js";
import { handlerOf, type HandlerContext } from "../methods/index.js";
import type { ConnectionPort } from "../methods/connection-port.js";
import type { Session } from "../session/session.js";
import { checkParams, type ParamsCheck } from "./frame-check.js";
import { RpcError } from "../errors/rpc-error.js";

/** What a handler needs besides the connection and session; built by the connection per request. */
export type RequestScope = Omit<HandlerContext, "connection" | "session">;

/** The connection as dispatch sees it (connection.ts): the handshake and observer checks, then what handlers get. */
export interface DispatchingConnection extends ConnectionPort {
  /** The session a method of `family` runs in; throws upstream's handshake error before `initialize`. */
  requireInitialized(family: MethodFamily): Session;
  /** An observer may read, never act: anything else is refused with -32013. */
  assertMayCall(method: string): void;
}

/** `prechecked`: the params already checked (off the event loop, frame-check.ts); otherwise they are checked here. */
export async function dispatch(connection: DispatchingConnection, method: string, params: unknown, scope: RequestScope, prechecked?: ParamsCheck): Promise<unknown> {
  if (!Object.hasOwn(methods, method)) {
    throw new RpcError(ErrorCode.MethodNotFound, `exec-server stub does not implement \`${method}\` yet`);
  }
  // Upstream decodes params before it looks at the handshake.
  const outcome = prechecked ?? (await checkParams(method, params));
  if (!outcome.ok) throw new RpcError(outcome.error.code, outcome.error.message, outcome.error.data);
  const checked = outcome.params;
  const family = methods[method as RequestMethod].family;
  const session = family === null ? undefined : connection.requireInitialized(family);
  connection.assertMayCall(method as RequestMethod);
  const found = handlerOf(method as RequestMethod);
  const handler = typeof found === "function" ? found : await found;
  return handler(checked, { connection, session, ...scope });
}
