/**
 * The dispatch table: every method of the shared `RequestMethods`, gathered
 * from one table per family folder (process/, environment/, ...). A new
 * family adds a folder and one line here.
 */
import type { ParamsOf, RequestMethod, RequestMethods, ResultOf } from "@execmux/shared";
import type { HandlerContext, SessionContext } from "./context.js";
import { capabilityHandlers } from "./capabilities/index.js";
import { environmentHandlers } from "./environment/index.js";
import { httpHandlers } from "./http/index.js";
import { fsHandlers } from "./fs/index.js";
import { initialize } from "./initialize.js";
import { processHandlers } from "./process/index.js";
import { sessionHandlers } from "./session/index.js";

export type { HandlerContext, ProcessContext, SessionContext } from "./context.js";

/** Methods of no family (initialize, session/list) may come before a session exists. */
type Handler<M extends RequestMethod> = (
  params: ParamsOf<M>,
  context: (typeof RequestMethods)[M]["family"] extends undefined ? HandlerContext : SessionContext,
) => ResultOf<M> | Promise<ResultOf<M>>;

export const handlers: { [M in RequestMethod]: Handler<M> } = {
  initialize,
  ...environmentHandlers,
  ...processHandlers,
  ...httpHandlers,
  ...fsHandlers,
  ...sessionHandlers,
  ...capabilityHandlers,
};
