/**
 * Where a persistent process host's socket lives: the daemon's private state
 * directory (state/state-directory.ts says where and what makes it
 * private), one socket per listen address, so the same `execmux serve`
 * command finds its host again after a crash or an upgrade.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { defaultCandidates, resolveStateDirectory, type StateDirectory } from "../state/state-directory.js";

/** Each configured value resolved once: the directory may be a fallback made with an unpredictable name. */
const resolved = new Map<string, StateDirectory>();

/** The private state directory, made if missing; throws when a configured one is not private. */
export function stateDirectory(configured: string): string {
  let found = resolved.get(configured);
  if (!found) resolved.set(configured, (found = resolveStateDirectory(configured)));
  return found.path;
}

/** What choosing the directory passed over, worth a warning (empty until it is chosen, or when nothing was). */
export function stateDirectoryWarnings(configured: string): string[] {
  const found = resolved.get(configured);
  if (!found || found.passedOver.length === 0) return [];
  const consequence = found.stable ? "" : `; using ${found.path}, which a later \`execmux serve\` will not find (choose one with --state-directory)`;
  return [`state directory: passed over ${found.passedOver.join("; ")}${consequence}`];
}

/**
 * Every place the state directory is or may be, chosen or not: what no
 * sandbox may see (config.ts daemonFiles).
 */
export function stateDirectoryPaths(configured: string): string[] {
  const chosen = resolved.get(configured)?.path;
  return [...new Set([...(configured ? [configured] : defaultCandidates()), ...(chosen ? [chosen] : [])])];
}

/** The host socket of a listen address. */
export function hostSocketPath(directory: string, listen: string): string {
  return join(directory, `host-${createHash("sha256").update(listen).digest("hex").slice(0, 16)}.sock`);
}
