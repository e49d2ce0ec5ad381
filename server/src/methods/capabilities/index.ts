/**
 * The capability discovery family: capabilityRoots/discoverV1 (the plugins
 * and skills under the roots a client names) and capabilities/discoverV2
 * (the executor's own), each read in one request. The work itself is loaded
 * on the first call.
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";

export const capabilityHandlers = {
  "capabilityRoots/discoverV1": async (params: ParamsOf<"capabilityRoots/discoverV1">, context: SessionContext): Promise<ResultOf<"capabilityRoots/discoverV1">> =>
    (await import("./discover-v1.js")).discoverCapabilityRoots(params, context),
  "capabilities/discoverV2": async (params: ParamsOf<"capabilities/discoverV2">, context: SessionContext): Promise<ResultOf<"capabilities/discoverV2">> =>
    (await import("./discover-v2.js")).discoverCapabilities(params, context),
} as const;
