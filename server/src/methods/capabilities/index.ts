/**
 * The capability discovery family (capabilityRoots/discoverV1): the plugins
 * and skills under the roots a client names, read in one request. The work
 * itself is loaded on the first call.
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";

export const capabilityHandlers = {
  "capabilityRoots/discoverV1": async (params: ParamsOf<"capabilityRoots/discoverV1">, context: SessionContext): Promise<ResultOf<"capabilityRoots/discoverV1">> =>
    (await import("./discover-v1.js")).discoverCapabilityRoots(params, context),
} as const;
