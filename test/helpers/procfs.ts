import { readdirSync, readFileSync } from "node:fs";

/** Resident memory of a process, in bytes. */
export function residentBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
}

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

/** Direct children of `pid`, with their state letter (Z for a zombie), from /proc. */
export function childrenOf(pid: number): { pid: number; state: string }[] {
  const children: { pid: number; state: string }[] = [];
  for (const entry of readdirSafe("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid) children.push({ pid: Number(entry), state: fields[0]! });
    } catch {
      // exited meanwhile
    }
  }
  return children;
}

/** A direct child of `parentPid` whose command line contains `marker`. */
function childRunning(parentPid: number, marker: string): number | undefined {
  return childrenOf(parentPid).find((child) => {
    try {
      return readFileSync(`/proc/${child.pid}/cmdline`, "latin1").includes(marker);
    } catch {
      return false;
    }
  })?.pid;
}

/** The daemon's spawner helper process (see server/src/spawner), a child of whichever process holds the sessions. */
export function spawnerOf(daemonPid: number): number | undefined {
  return childRunning(hostOf(daemonPid) ?? daemonPid, "spawner-main");
}

/** The process host `execmux serve` started (server/src/host), while the daemon that started it lives. */
export function hostOf(daemonPid: number): number | undefined {
  return childRunning(daemonPid, "host-main");
}

/** Memory of the daemon and its process host together: what the machine pays for it. */
export function daemonResidentBytes(daemonPid: number): number {
  const host = hostOf(daemonPid);
  return residentBytes(daemonPid) + (host ? residentBytes(host) : 0);
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
