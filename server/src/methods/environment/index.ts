/** The environment family: what the executor is, and whether it is up. */
import type { ResultOf } from "@execmux/shared";
import { environmentConfigRead } from "./config-read.js";
import { environmentInfo } from "./environment-info.js";

export const environmentHandlers = {
  "environment/info": (): Promise<ResultOf<"environment/info">> => environmentInfo(),
  /** Answered once the daemon can serve requests at all; only `ready` exists upstream. */
  "environment/status": (): ResultOf<"environment/status"> => ({ status: "ready" }),
  "environmentConfig/read": environmentConfigRead,
} as const;
