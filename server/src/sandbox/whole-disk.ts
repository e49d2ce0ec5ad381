/**
 * Whether a permission profile reads or writes the whole disk: the one
 * decision of whether anything needs confining. fs/* reads run directly when
 * the profile reads everything and writes when it writes everything
 * (upstream's `should_read_from_sandbox` / `should_write_into_sandbox`), and
 * process/start runs a process unconfined only when it writes everything
 * (and the network is open).
 *
 * Decided on the profile as sent, before any path is resolved, as upstream
 * does: a read never fails because some restricted path of the profile could
 * not be resolved. Where the answer would need resolving (two entries that
 * name the same directory differently), it says "no": the cost of that is a
 * confined call, never an unconfined one the profile forbids.
 */
import type { FileSystemSandboxEntry, PermissionProfile } from "@execmux/shared";

const isRoot = (entry: FileSystemSandboxEntry) => entry.path.type === "special" && entry.path.value.kind === "root";
const denies = (entry: FileSystemSandboxEntry) => entry.access === "deny" || entry.access === "none";
const samePath = (a: FileSystemSandboxEntry, b: FileSystemSandboxEntry) => JSON.stringify(a.path) === JSON.stringify(b.path);

function restrictedEntries(profile: PermissionProfile): readonly FileSystemSandboxEntry[] | undefined {
  return profile.type === "managed" && profile.file_system.type === "restricted" ? profile.file_system.entries : undefined;
}

/** A `root` grant and nothing denied anywhere (a deny can hide any path). */
export function readsWholeDisk(profile: PermissionProfile): boolean {
  const entries = restrictedEntries(profile);
  if (!entries) return true;
  return entries.some((entry) => isRoot(entry) && !denies(entry)) && !entries.some(denies);
}

/**
 * A `root = write` grant that no entry narrows: every other entry grants
 * write, or only reads a path that a write entry for the same path
 * overrides (write beats read on one path, as upstream's precedence).
 */
export function writesWholeDisk(profile: PermissionProfile): boolean {
  const entries = restrictedEntries(profile);
  if (!entries) return true;
  if (!entries.some((entry) => isRoot(entry) && entry.access === "write")) return false;
  return entries.every(
    (entry) => entry.access === "write" || (!denies(entry) && entries.some((other) => other.access === "write" && samePath(other, entry))),
  );
}
