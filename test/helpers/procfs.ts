import { readdirSync, readFileSync, readlinkSync } from "node:fs";

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
  return spawnersOf(daemonPid)[0];
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

/**
 * The host's pid of the process that a child of the daemon calls
 * `namespacePid` (its `$$`, `$!`, `pgrep`): the spawner runs in a PID
 * namespace of its own with its own /proc by default
 * (server/src/spawner/pid-namespace.ts), and the tests look from outside.
 * Where it does not, the two are the same. Throws where the process is not
 * found (it exited), or where two spawners below `daemonPid` have it.
 */
export function hostPidOf(namespacePid: number, daemonPid = process.pid): number {
  const namespaces = new Set(spawnersOf(daemonPid).map((spawner) => linkOf(`/proc/${spawner}/ns/pid`)));
  if (namespaces.size === 0) throw new Error(`no spawner below ${daemonPid}`);
  if (namespaces.has(linkOf("/proc/self/ns/pid"))) {
    if (namespaces.size > 1) throw new Error(`spawners below ${daemonPid} in and out of PID namespaces: ${namespacePid} is ambiguous`);
    return namespacePid;
  }
  const found: number[] = [];
  for (const entry of readdirSafe("/proc")) {
    if (!/^\d+$/.test(entry) || !namespaces.has(linkOf(`/proc/${entry}/ns/pid`))) continue;
    try {
      const ids = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${entry}/status`, "latin1"))![1]!.trim().split(/\s+/);
      if (Number(ids[ids.length - 1]) === namespacePid) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  if (found.length !== 1) throw new Error(`${found.length} processes are ${namespacePid} in the PID namespaces of the spawners below ${daemonPid}`);
  return found[0]!;
}

/**
 * What runs in the PID namespaces of the spawners below `daemonPid` besides
 * the spawners and their inits: everything the daemon's children started and
 * left. Empty where the spawners run in no namespace of their own.
 */
export function leftInSpawnerNamespaces(daemonPid: number): number[] {
  const spawners = spawnersOf(daemonPid);
  const namespaces = new Set(spawners.map((spawner) => linkOf(`/proc/${spawner}/ns/pid`)));
  namespaces.delete(linkOf("/proc/self/ns/pid"));
  const left: number[] = [];
  for (const entry of readdirSafe("/proc")) {
    const pid = Number(entry);
    if (!/^\d+$/.test(entry) || spawners.includes(pid) || !namespaces.has(linkOf(`/proc/${entry}/ns/pid`))) continue;
    try {
      if (!/^NSpid:.*\s1$/m.test(readFileSync(`/proc/${entry}/status`, "latin1"))) left.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return left;
}

/** Every spawner below `daemonPid` (as spawnerOf; a test process may hold several daemons). */
function spawnersOf(daemonPid: number): number[] {
  const spawners: number[] = [];
  for (const pending = [hostOf(daemonPid) ?? daemonPid]; pending.length > 0; ) {
    for (const child of childrenOf(pending.shift()!)) {
      const line = commandLine(child.pid);
      if (!line.includes("spawner-main")) continue;
      if (line.startsWith(`${process.execPath}\0`)) spawners.push(child.pid);
      else pending.push(child.pid);
    }
  }
  return spawners;
}

function linkOf(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
