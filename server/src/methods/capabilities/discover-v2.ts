/**
 * capabilities/discoverV2 (capability capabilityDiscoveryV2): the
 * executor's installed plugins and skills, parsed (executor-capabilities.ts).
 * It costs what a discoverV1 request costs (withDiscoveryBudget, and the
 * same bounds across its locations).
 *
 * Its `sandbox` (the agent sends permissions `disabled`) is honoured as far
 * as execmux can: a profile that reads the whole disk discovers in the
 * daemon with its own files out of reach; any narrower profile is refused,
 * never discovered without it.
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidParams } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";
import { pathUriError } from "../fs/fs-path.js";
import { fsConfinement } from "../fs/sandbox-gate.js";
import { withDiscoveryBudget } from "./discover-v1.js";
import { discoverExecutorCapabilities, executorHome } from "./executor-capabilities.js";
import { MAX_DISCOVERY_BYTES_PER_REQUEST, MAX_DISCOVERY_ENTRIES_PER_REQUEST, MAX_DISCOVERY_MS } from "./limits.js";
import { discoverRoots } from "./root-discovery.js";

export async function discoverCapabilities(params: ParamsOf<"capabilities/discoverV2">, context: SessionContext): Promise<ResultOf<"capabilities/discoverV2">> {
  const cwdError = pathUriError(params.cwd);
  if (cwdError?.parse) throw invalidParams(cwdError.reason);
  const sandbox = params.sandbox ?? undefined;
  // Upstream's struct for it has `cwd` required.
  if (sandbox && sandbox.cwd === undefined) throw invalidParams("missing field `cwd`");
  const confinement = await fsConfinement(sandbox, "read", context);
  if (confinement) {
    throw invalidParams("capabilities/discoverV2 under a profile that does not read the whole disk is not supported by execmux");
  }
  const hiddenPaths = sandbox ? context.connection.deps.hiddenPaths : undefined;
  const limits = {
    maxBytes: MAX_DISCOVERY_BYTES_PER_REQUEST,
    maxEntries: MAX_DISCOVERY_ENTRIES_PER_REQUEST,
    deadline: Date.now() + MAX_DISCOVERY_MS,
    ...(hiddenPaths ? { hiddenPaths } : {}),
  };
  return withDiscoveryBudget(context, 2, () =>
    discoverExecutorCapabilities(executorHome(), limits, (roots, rootLimits) => discoverRoots(roots, rootLimits, context.signal)),
  );
}
