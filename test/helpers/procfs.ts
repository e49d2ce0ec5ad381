import { readdirSync, readFileSync } from "node:fs";

/** True while the pid exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Pids of the daemon's (this process's) children that are zombies: must always be empty. */
export function zombieChildren(parentPid = process.pid): number[] {
  const zombies: number[] = [];
  for (const entry of readdirSafe("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z" && Number(fields[1]) === parentPid) zombies.push(pid);
    } catch {
      // gone
    }
  }
  return zombies;
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
