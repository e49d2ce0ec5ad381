/** The process family: process/* requests, one file each. */
import { processAck } from "./ack.js";
import { processCloseStdin } from "./close-stdin.js";
import { processList } from "./list.js";
import { processRead } from "./read.js";
import { processResize } from "./resize.js";
import { processSignal } from "./signal.js";
import { processStart } from "./start.js";
import { processTerminate } from "./terminate.js";
import { processWrite } from "./write.js";

export const processHandlers = {
  "process/start": processStart,
  "process/read": processRead,
  "process/write": processWrite,
  "process/signal": processSignal,
  "process/terminate": processTerminate,
  "process/resize": processResize,
  "process/closeStdin": processCloseStdin,
  "process/list": processList,
  "process/ack": processAck,
} as const;
