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

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1");
  } catch {
    return "";
  }
}

/**
 * The spawner process of a daemon: a child of whichever process holds the
 * sessions (its process host, or the daemon itself in-process), or where it
 * runs in a PID namespace, below the perl that made the namespace and its
 * init (spawner/pid-namespace.ts), whose command lines name spawner-main too.
 */
export function spawnerOf(daemonPid: number): number | undefined {
  for (const pending = [hostOf(daemonPid) ?? daemonPid]; pending.length > 0; ) {
    for (const child of childrenOf(pending.shift()!)) {
      const line = commandLine(child.pid);
      if (!line.includes("spawner-main")) continue;
      if (line.startsWith(`${process.execPath}\0`)) return child.pid;
      pending.push(child.pid);
    }
  }
  return undefined;
}

/** The process host `execmux serve` started (server/src/host), while the daemon that started it lives. */
export function hostOf(daemonPid: number): number | undefined {
  return childrenOf(daemonPid).find((child) => commandLine(child.pid).includes("host-main"))?.pid;
}

/** The daemon listening on the port, which the process host forked for `execmux serve`. */
export function frontOf(hostPid: number): number | undefined {
  return childrenOf(hostPid).find((child) => / serve\b/.test(commandLine(child.pid).replaceAll("\0", " ")))?.pid;
}

/** Memory of `execmux serve`, its process host and the daemon that host forked, together: what the machine pays for it. */
export function daemonResidentBytes(daemonPid: number): number {
  const host = hostOf(daemonPid);
  const front = host && frontOf(host);
  return residentBytes(daemonPid) + (host ? residentBytes(host) : 0) + (front ? residentBytes(front) : 0);
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
