/**
 * The dispatch table: every method of the shared `RequestMethods`, from one
 * table per family folder (process/, environment/, ...). The filesystem and
 * HTTP families load on the first call of one of their methods: a daemon
 * that serves only processes never loads their code. A new family adds a
 * folder, a line in FAMILIES and its table's type in Tables.
 */
import type { ParamsOf, RequestMethod, RequestMethods, ResultOf } from "@execmux/shared";
import type { HandlerContext, SessionContext } from "./context.js";
import type { EncodedResult } from "./encoded-result.js";
import { environmentHandlers } from "./environment/index.js";
import { initialize } from "./initialize.js";
import { processHandlers } from "./process/index.js";

export type { HandlerContext, ProcessContext, SessionContext } from "./context.js";

/** Methods of no family (initialize, session/list) may come before a session exists. */
type Handler<M extends RequestMethod> = (
  params: ParamsOf<M>,
  context: (typeof RequestMethods)[M]["family"] extends undefined ? HandlerContext : SessionContext,
) => ResultOf<M> | EncodedResult<ResultOf<M>> | Promise<ResultOf<M> | EncodedResult<ResultOf<M>>>;

type AnyHandler = (params: unknown, context: HandlerContext) => unknown;

/**
 * Each family's module, by the part of its methods' names before the slash.
 * The ones every client uses come with the daemon; the others load on use.
 */
const FAMILIES = {
  initialize: () => Promise.resolve({ initialize }),
  environment: () => Promise.resolve(environmentHandlers),
  // environmentConfig/read lives with the environment family (its parsing loads on its first call).
  environmentConfig: () => Promise.resolve(environmentHandlers),
  process: () => Promise.resolve(processHandlers),
  http: () => import("./http/index.js").then((module) => module.httpHandlers),
  fs: () => import("./fs/index.js").then((module) => module.fsHandlers),
  session: () => import("./session/index.js").then((module) => module.sessionHandlers),
  // capabilityRoots/discoverV1 and capabilities/discoverV2: one module, two name prefixes.
  capabilityRoots: () => import("./capabilities/index.js").then((module) => module.capabilityHandlers),
  capabilities: () => import("./capabilities/index.js").then((module) => module.capabilityHandlers),
} satisfies Record<string, () => Promise<object>>;

/** Every family's table together; a method without a handler does not compile. */
type Tables = { initialize: typeof import("./initialize.js").initialize } & (typeof import("./environment/index.js"))["environmentHandlers"] &
  (typeof import("./process/index.js"))["processHandlers"] &
  (typeof import("./http/index.js"))["httpHandlers"] &
  (typeof import("./fs/index.js"))["fsHandlers"] &
  (typeof import("./session/index.js"))["sessionHandlers"] &
  (typeof import("./capabilities/index.js"))["capabilityHandlers"];
export const everyMethodHasAHandler = (tables: Tables): { [M in RequestMethod]: Handler<M> } => tables;

const loaded = new Map<string, AnyHandler>();
const loading = new Map<string, Promise<void>>();

function familyOf(method: RequestMethod): keyof typeof FAMILIES {
  return method.split("/")[0] as keyof typeof FAMILIES;
}

/** The method's handler: at once once its family is loaded, else after loading it. */
export function handlerOf(method: RequestMethod): AnyHandler | Promise<AnyHandler> {
  const handler = loaded.get(method);
  if (handler) return handler;
  const family = familyOf(method);
  let load = loading.get(family);
  if (!load) {
    load = FAMILIES[family]().then((table) => {
      for (const [name, found] of Object.entries(table)) loaded.set(name, found as AnyHandler);
    });
    loading.set(family, load);
  }
  return load.then(() => loaded.get(method)!);
}
