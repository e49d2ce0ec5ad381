/**
 * What `environment/info` says about sandboxing here (the SandboxSupport
 * extension, networkProxyTransparentTcp): only probes, not the sandbox's
 * machinery, which loads on the first sandboxed start.
 */
import type { SandboxSupport } from "@execmux/shared";
import { resolveExecutable } from "../process/resolve-executable.js";

/** The probe, loaded on the first environment/info: it brings the sandbox's launcher with it. */
const availability = async () => (await import("./availability.js")).sandboxAvailability();

export async function sandboxSupport(): Promise<SandboxSupport> {
  const found = await availability();
  return found.available ? { sandboxType: "linuxSeccomp" } : { sandboxType: "none", unavailableReason: found.reason };
}

/** Where the sandbox's tools are looked for: the daemon's PATH, then where Debian keeps them (ip and iptables are in sbin). */
const TOOL_PATH = `${process.env.PATH ?? ""}:/usr/bin:/bin:/usr/sbin:/sbin`;

/** A tool of the sandbox (bwrap, env) or of the network proxy's relay (ip, iptables), if this machine has it. */
export function findTool(name: string): string | undefined {
  try {
    return resolveExecutable(name, "/", TOOL_PATH);
  } catch {
    return undefined;
  }
}

/** Whether transparent TCP can be set up here: a sandbox, and the relay's tools (environment/info's networkProxyTransparentTcp). */
export async function transparentTcpSupported(): Promise<boolean> {
  return (await availability()).available && ["perl", "ip", "iptables", "setpriv"].every((name) => findTool(name) !== undefined);
}
