/**
 * Codex's sandbox, enforced with bubblewrap. process/start calls
 * `prepareProcessSandbox` once and spawns what `wrap` returns. The fs
 * methods ask whole-disk.ts whether a call needs confining and, when it
 * does, call `prepareFsSandbox` and run the operation through
 * confined-call.ts.
 */
import { realpathSync } from "node:fs";
import type { FileSystemSandboxContext, SandboxType as SharedSandboxType, WireFileSystemSandboxContext } from "@execmux/shared";
import { invalidParams } from "../errors/rpc-error.js";
import { sandboxAvailability, type SandboxAvailability } from "./availability.js";
import { bwrapArgs } from "./bwrap-args.js";
import { fsPolicyPaths, processPolicyPaths } from "./context-paths.js";
import { launchCommand, type Command, type SandboxTools } from "./launcher.js";
import type { RelayRoute } from "./network-relay.js";
import type { SandboxPolicy } from "./policy.js";
import { resolvePolicy } from "./resolve-policy.js";
import { writesWholeDisk } from "./whole-disk.js";
import type { PreparedFsSandbox } from "./prepared-fs-sandbox.js";

export { isLikelySandboxDenied } from "./sandbox-denied.js";
export { runConfined, ConfinedCallError, type ConfinedCall } from "./confined-call.js";
export { readsWholeDisk, writesWholeDisk } from "./whole-disk.js";
export { sandboxAvailability, type SandboxAvailability } from "./availability.js";
export { sandboxSupport, transparentTcpSupported } from "./support.js";
import { findTool } from "./support.js";
export type { SandboxPolicy } from "./policy.js";

/** The `sandboxType` values a Linux executor reports: upstream's for bubblewrap (which it pairs with seccomp). */
export type SandboxType = Extract<SharedSandboxType, "none" | "linuxSeccomp">;

export interface SandboxOptions {
  /** Daemon files no sandboxed process may see (its token file, TLS key, FIFOs). */
  readonly hiddenPaths: readonly string[];
}

export interface ProcessSandboxOptions extends SandboxOptions {
  /** The process's cwd (native, existing): where it starts, and the policy's cwd for a legacy context. */
  readonly processCwd: string;
  readonly enforceManagedNetwork?: boolean;
  readonly managedNetwork?: boolean;
  /** An executor-local proxy to bridge in (network-proxy/launch.ts): its socket directory and the relay's routes. */
  readonly proxyBridge?:
    | {
        readonly directory: string;
        readonly relayScript: string;
        readonly routes: readonly RelayRoute[];
        readonly transparent?: { readonly tcpPort: number; readonly socket: string; readonly dnsPort: number } | undefined;
      }
    | undefined;
}

export interface PreparedProcessSandbox {
  readonly sandboxType: SandboxType;
  readonly policy: SandboxPolicy;
  /** What to spawn instead of `argv` (with `arg0`); undefined when the profile restricts nothing. */
  readonly wrap: ((argv: readonly string[], arg0?: string) => Command) | undefined;
}

/** Refuses (-32602) when no sandbox can run here, saying which prerequisite is missing. */
async function requireTools(): Promise<SandboxTools> {
  const availability: SandboxAvailability = await sandboxAvailability();
  if (!availability.available) throw invalidParams(`sandbox intent cannot be enforced on this executor: ${availability.reason}`);
  return availability.tools;
}

/** Everything process/start needs to confine a process, or a -32602 naming what cannot be enforced. */
export async function prepareProcessSandbox(
  context: FileSystemSandboxContext,
  options: ProcessSandboxOptions,
): Promise<PreparedProcessSandbox> {
  const policy = resolvePolicy(context.permissions, processPolicyPaths(context, options.processCwd), {
    hiddenPaths: options.hiddenPaths,
    enforceManagedNetwork: options.enforceManagedNetwork ?? false,
    managedNetwork: options.managedNetwork ?? false,
    proxyBridge: options.proxyBridge?.directory,
  });
  // A profile that restricts nothing (disabled, unrestricted with network) runs as without a sandbox, and says so.
  if (writesWholeDisk(context.permissions) && !policy.isolateNetwork) return { sandboxType: "none", policy, wrap: undefined };
  const tools = await requireTools();
  const bridge = options.proxyBridge;
  const transparent = bridge?.transparent ? { relay: { ...bridge.transparent, ...requireTransparentTools() }, setpriv: requireTool("setpriv", "util-linux's setpriv") } : undefined;
  const args = bwrapArgs(policy, realpathSync(options.processCwd), { netAdmin: transparent !== undefined });
  const relay = bridge ? { perl: requireTool("perl", "perl"), script: bridge.relayScript, routes: bridge.routes, transparent } : undefined;
  return { sandboxType: "linuxSeccomp", policy, wrap: (argv, arg0) => launchCommand(tools, args, argv, arg0, relay) };
}

/** A tool the proxy's relay needs; without it the proxy cannot be bridged in, and the start is refused. */
function requireTool(name: string, what: string): string {
  const found = findTool(name);
  if (!found) throw invalidParams(`the executor-local network proxy cannot be bridged into the sandbox: ${what} is not installed on this executor`);
  return found;
}

function requireTransparentTools(): { ip: string; iptables: string } {
  return { ip: requireTool("ip", "iproute2's ip (for transparent TCP)"), iptables: requireTool("iptables", "iptables (for transparent TCP)") };
}

export type { PreparedFsSandbox } from "./prepared-fs-sandbox.js";

/**
 * The sandbox an fs call runs in when whole-disk.ts says it needs one, or a
 * -32602 naming what cannot be enforced (a missing bubblewrap, user
 * namespaces off, an entry bubblewrap cannot express).
 */
export async function prepareFsSandbox(context: WireFileSystemSandboxContext, options: SandboxOptions): Promise<PreparedFsSandbox> {
  const policy = resolvePolicy(context.permissions, fsPolicyPaths(context), {
    hiddenPaths: options.hiddenPaths,
    enforceManagedNetwork: false,
    managedNetwork: false,
  });
  return { policy, tools: await requireTools() };
}
