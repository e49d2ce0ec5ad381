/**
 * What `environment/info` says about sandboxing here (the SandboxSupport
 * extension, networkProxyTransparentTcp): only probes, not the sandbox's
 * machinery, which loads on the first sandboxed start.
 */
import type { SandboxSupport } from "@execmux/shared";
import { resolveExecutable } from "../process/resolve-executable.js";
import { sandboxAvailability } from "./availability.js";

export async function sandboxSupport(): Promise<SandboxSupport> {
  const availability = await sandboxAvailability();
  return availability.available ? { sandboxType: "linuxSeccomp" } : { sandboxType: "none", unavailableReason: availability.reason };
}

/** Where the relay's tools are looked for: the daemon's PATH, then where Debian keeps them (ip and iptables are in sbin). */
const TOOL_PATH = `${process.env.PATH ?? ""}:/usr/bin:/bin:/usr/sbin:/sbin`;

/** A tool of the network proxy's relay, if this machine has it. */
export function findTool(name: string): string | undefined {
  try {
    return resolveExecutable(name, "/", TOOL_PATH);
  } catch {
    return undefined;
  }
}

/** Whether transparent TCP can be set up here: a sandbox, and the relay's tools (environment/info's networkProxyTransparentTcp). */
export async function transparentTcpSupported(): Promise<boolean> {
  return (await sandboxAvailability()).available && ["perl", "ip", "iptables", "setpriv"].every((name) => findTool(name) !== undefined);
}
