/** What `environment/info` says about sandboxing here (the SandboxSupport extension): only the probe, not the sandbox's machinery. */
import type { SandboxSupport } from "@execmux/shared";
import { sandboxAvailability } from "./availability.js";

export async function sandboxSupport(): Promise<SandboxSupport> {
  const availability = await sandboxAvailability();
  return availability.available ? { sandboxType: "linuxSeccomp" } : { sandboxType: "none", unavailableReason: availability.reason };
}
