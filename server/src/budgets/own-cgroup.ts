/**
 * Where this process sits in the cgroup v2 hierarchy (the process host,
 * in C, finds its own the same way: server/native/src/trees.c).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The cgroup v2 directory of this process, or undefined where there is none (no cgroup2 mount, not Linux). */
export function ownCgroupDirectory(): string | undefined {
  let mounts: string;
  let membership: string;
  try {
    mounts = readFileSync("/proc/self/mountinfo", "utf8");
    membership = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return undefined;
  }
  // mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE SUPEROPTIONS"
  let mountPoint: string | undefined;
  for (const line of mounts.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!right?.startsWith("cgroup2 ")) continue;
    const fields = left!.split(" ");
    // A bind mount of a subtree (ROOT other than "/") would shift every path: not used.
    if (fields[3] !== "/") continue;
    mountPoint = unescapeMountPath(fields[4]!);
    break;
  }
  const own = membership.split("\n").find((line) => line.startsWith("0::"))?.slice(3);
  if (mountPoint === undefined || own === undefined || own.includes("(deleted)")) return undefined;
  return join(mountPoint, own);
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
