/** The dispatch table: one handler per method of the shared `RequestMethods`. */
import type { ParamsOf, RequestMethod, ResultOf } from "@execmux/shared";
import type { HandlerContext, ProcessContext } from "./context.js";
import { initialize } from "./initialize.js";
import { processAck } from "./process-ack.js";
import { processCloseStdin } from "./process-close-stdin.js";
import { processList } from "./process-list.js";
import { processRead } from "./process-read.js";
import { processResize } from "./process-resize.js";
import { processSignal } from "./process-signal.js";
import { processStart } from "./process-start.js";
import { processTerminate } from "./process-terminate.js";
import { processWrite } from "./process-write.js";

export type { HandlerContext, ProcessContext } from "./context.js";

type Handler<M extends RequestMethod> = (
  params: ParamsOf<M>,
  context: M extends "initialize" ? HandlerContext : ProcessContext,
) => ResultOf<M> | Promise<ResultOf<M>>;

export const handlers: { [M in RequestMethod]: Handler<M> } = {
  initialize,
  "process/start": processStart,
  "process/read": processRead,
  "process/write": processWrite,
  "process/signal": processSignal,
  "process/terminate": processTerminate,
  "process/resize": processResize,
  "process/closeStdin": processCloseStdin,
  "process/list": processList,
  "process/ack": processAck,
};
