/**
 * A permission profile made concrete for this host: every path rule as an
 * existing, canonical path with the access it gets there. The rule on the
 * deepest ancestor of a path decides its access, as upstream's "the most
 * specific entry wins"; bwrap-args.ts turns the rules into mounts in that
 * same order.
 */
import { sep } from "node:path";

export type PathAccess = "read" | "write" | "deny";

export interface PathRule {
  /** Canonical (symlinks resolved) and existing when the policy was made. */
  readonly path: string;
  readonly access: PathAccess;
  /** A deny rule the daemon added for its own files, not the profile. */
  readonly daemonPrivate?: boolean;
}

export interface SandboxPolicy {
  /** Sorted by depth, the root ("/") first; at most one rule per path. */
  readonly rules: readonly PathRule[];
  /** The network namespace is a new, empty one (loopback only, nothing listening). */
  readonly isolateNetwork: boolean;
}

/** When two rules name the same path: deny beats write, write beats read (upstream's precedence). */
const PRECEDENCE: Record<PathAccess, number> = { read: 0, write: 1, deny: 2 };

export function depthOf(path: string): number {
  return path === sep ? 0 : path.split(sep).length - 1;
}

/** True when `path` is `ancestor` or lies below it. */
export function isWithin(path: string, ancestor: string): boolean {
  if (ancestor === sep) return true;
  return path === ancestor || path.startsWith(ancestor + sep);
}

/** The access `path` gets: the rule on its deepest ancestor (or itself). */
export function accessAt(rules: readonly PathRule[], path: string): PathAccess {
  let best: PathRule | undefined;
  for (const rule of rules) {
    if (isWithin(path, rule.path) && (!best || depthOf(rule.path) > depthOf(best.path))) best = rule;
  }
  return best?.access ?? "deny";
}

/** One rule per path (the strongest), sorted by depth so that ancestors come first. */
export function normalizeRules(rules: readonly PathRule[]): PathRule[] {
  const byPath = new Map<string, PathRule>();
  for (const rule of rules) {
    const existing = byPath.get(rule.path);
    if (!existing || PRECEDENCE[rule.access] > PRECEDENCE[existing.access]) byPath.set(rule.path, rule);
  }
  return [...byPath.values()].sort((a, b) => depthOf(a.path) - depthOf(b.path) || a.path.localeCompare(b.path));
}

export function makePolicy(rules: readonly PathRule[], isolateNetwork: boolean): SandboxPolicy {
  return { rules: normalizeRules(rules), isolateNetwork };
}
