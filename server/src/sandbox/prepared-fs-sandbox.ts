/**
 * What a confined fs call runs in: the resolved policy and the tools that
 * enforce it (index.ts prepares it, confined-call.ts runs in it).
 */
import type { SandboxTools } from "./launcher.js";
import type { SandboxPolicy } from "./policy.js";

export interface PreparedFsSandbox {
  readonly policy: SandboxPolicy;
  readonly tools: SandboxTools;
}
