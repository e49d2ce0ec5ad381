/**
 * Whether this host can run a sandbox at all: bubblewrap installed, user
 * namespaces allowed, and coreutils' `env` new enough. Found out once, by
 * running the same shape of sandbox a process would get around `true`, and
 * cached: it only changes when an administrator changes the host.
 */
import { execFile } from "node:child_process";
import { bwrapArgs } from "./bwrap-args.js";
import { launchCommand, type SandboxTools } from "./launcher.js";
import { makePolicy } from "./policy.js";
import { findTool } from "./support.js";

export type SandboxAvailability =
  | { readonly available: true; readonly tools: SandboxTools }
  | { readonly available: false; readonly reason: string };

const PROBE_TIMEOUT_MS = 10_000;

/** bwrap's own words on what failed, turned into which prerequisite is missing. */
function explain(stderr: string): string {
  const detail = stderr.trim().split("\n").at(-1) ?? "";
  if (/unrecognized option '--(ignore|default)-signal/.test(stderr)) {
    return "coreutils `env` on this executor is too old for a sandbox (it needs --ignore-signal, coreutils 8.31 or later)";
  }
  if (/namespace|uid map|setting up uid|No permission|Operation not permitted/i.test(stderr)) {
    return `user namespaces are unavailable on this executor, so bubblewrap cannot create a sandbox (bwrap: ${detail})`;
  }
  return `bubblewrap cannot create a sandbox on this executor (bwrap: ${detail || "no output"})`;
}

async function probe(): Promise<SandboxAvailability> {
  const bwrap = findTool("bwrap");
  if (!bwrap) return { available: false, reason: "bubblewrap (bwrap) is not installed on this executor" };
  const env = findTool("env");
  const truePath = findTool("true");
  if (!env || !truePath) return { available: false, reason: "coreutils (`env`, `true`) is not installed on this executor" };
  const tools = { bwrap, env };
  // The strictest shape a process gets: read-only root, new network namespace.
  const policy = makePolicy([{ path: "/", access: "read" }], true);
  const command = launchCommand(tools, bwrapArgs(policy, "/"), [truePath]);
  return new Promise((resolve) => {
    execFile(command.file, command.args, { timeout: PROBE_TIMEOUT_MS, env: {} }, (error, _stdout, stderr) => {
      resolve(error ? { available: false, reason: explain(String(stderr) || error.message) } : { available: true, tools });
    });
  });
}

let cached: Promise<SandboxAvailability> | undefined;

/** The cached answer (the probe runs on the first call). */
export function sandboxAvailability(): Promise<SandboxAvailability> {
  return (cached ??= probe());
}
