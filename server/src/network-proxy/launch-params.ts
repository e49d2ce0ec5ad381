/**
 * process/start's network fields, checked as upstream 0.171 checks them and
 * in its order (each check below was seen to win over the ones after it):
 * the decision callback's timeout, transparent TCP's prerequisites, then
 * the proxy's own configuration. Failures are -32602 in upstream's words.
 */
import type { ParamsOf, RemoteNetworkProxyConfig } from "@execmux/shared";
import { invalidParams } from "../errors/rpc-error.js";
import { NetworkPolicy } from "./policy.js";

/** Upstream's bound on a process id that network/policyRequest carries. */
const CALLBACK_PROCESS_ID_MAX_BYTES = 256;

/** A `sandbox` that upstream's Linux executor enforces (a managed profile confines what it names). */
function hasManagedSandbox(params: ParamsOf<"process/start">): boolean {
  return params.sandbox?.permissions.type === "managed";
}

/** Throws the -32602 upstream gives for these network fields; returns the policy the proxy is to enforce. */
export function checkNetworkParams(params: ParamsOf<"process/start">): NetworkPolicy | undefined {
  const launch = params.networkProxy ?? undefined;
  if (launch?.policyDecisionTimeoutMs === 0) throw invalidParams("network policy decision callback timeout must be nonzero");
  if (launch?.policyDecisionTimeoutMs != null) {
    const bytes = Buffer.byteLength(params.processId);
    if (bytes === 0 || bytes > CALLBACK_PROCESS_ID_MAX_BYTES) {
      throw invalidParams(`callback-enabled process ID must be non-empty and at most ${CALLBACK_PROCESS_ID_MAX_BYTES} bytes`);
    }
  }
  if (params.managedNetwork?.transparentTcp === true && launch?.proxy.transparentTcp !== true) {
    throw invalidParams("transparent TCP requires an executor-local managed proxy");
  }
  if (!launch) return undefined;
  if (launch.proxy.transparentTcp === true && !hasManagedSandbox(params)) {
    throw invalidParams("transparent TCP requires a managed Linux sandbox");
  }
  try {
    return NetworkPolicy.from(checkedConfig(launch.proxy));
  } catch (error) {
    throw invalidParams(`invalid network proxy config: ${(error as Error).message}`);
  }
}

function checkedConfig(proxy: RemoteNetworkProxyConfig): RemoteNetworkProxyConfig {
  if (!proxy.enabled) throw new Error("executor-local network proxy launch requires an enabled proxy");
  if (proxy.transparentTcp === true && !proxy.enableSocks5) throw new Error("transparent_tcp requires an enabled managed SOCKS5 proxy");
  Object.keys(proxy.unixSockets ?? {}).forEach((path, index) => {
    if (!path.startsWith("/") || path.includes("\0")) {
      throw new Error(`invalid network.allow_unix_sockets[${index}]: expected a NUL-free absolute path for Linux, got ${JSON.stringify(path)}`);
    }
  });
  return proxy;
}
