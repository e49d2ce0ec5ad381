/**
 * What /proc shows of a daemon and its process host (server/native: the
 * `execmux-host` program that spawns, holds and reaps every child). Tests
 * look from outside: the machine's pids, the host's PID namespace.
 */
import { hostSocketPath } from "../../server/dist/host/state-directory.js";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename } from "node:path";

/** Resident memory of a process, in bytes (0 once it is gone). */
export function residentBytes(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
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

/** Fields of /proc/PID/stat after the command name (state first, then ppid, pgrp, session, ...), or undefined once gone. */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** The parent's pid, or undefined once gone. */
export const parentOf = (pid: number): number | undefined => {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : undefined;
};

/** Pids of the daemon's (this process's) children that are zombies: must always be empty. */
export function zombieChildren(parentPid = process.pid): number[] {
  return childrenOf(parentPid)
    .filter((child) => child.state === "Z")
    .map((child) => child.pid);
}

/** Direct children of `pid`, with their state letter (Z for a zombie), from /proc. */
export function childrenOf(pid: number): { pid: number; state: string }[] {
  const children: { pid: number; state: string }[] = [];
  for (const entry of readdirSafe("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[1]) === pid) children.push({ pid: Number(entry), state: fields[0]! });
  }
  return children;
}

/** The NUL-separated command line, as an array ([] once gone). */
export function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").slice(0, -1);
  } catch {
    return [];
  }
}

/** Every running `execmux-host` on the machine (of any checkout). */
export function allHosts(): number[] {
  return readdirSafe("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => basename(commandLine(pid)[0] ?? "") === "execmux-host" && isRunning(pid));
}

/** A daemon the test holds in-process (startTestDaemon): it knows its host. */
interface InProcessDaemon {
  readonly runtime: { readonly host: { readonly info: { readonly pid: number } } };
}

/**
 * The process host of a daemon: one started in this process (startTestDaemon)
 * knows it; for `execmux serve` (its pid), it is the host whose socket is
 * the one of the daemon's --listen (a fixed port: a persistent host, its
 * socket named after the address), or the private host that shares the
 * daemon's stderr (port 0, stdio, in-process: it inherits it).
 */
export function hostOf(daemon: number | InProcessDaemon): number | undefined {
  if (typeof daemon !== "number") return daemon.runtime.host.info.pid;
  const args = commandLine(daemon);
  const listen = optionOf(args, "--listen");
  const socketName = listen === undefined ? undefined : basename(hostSocketPath("", listen));
  const stateDirectory = optionOf(args, "--state-directory");
  const stderr = linkOf(`/proc/${daemon}/fd/2`);
  return allHosts().find((host) => {
    const hostArgs = commandLine(host);
    const socket = optionOf(hostArgs, "--socket");
    if (socket !== undefined) return basename(socket) === socketName && (stateDirectory === undefined || socket.startsWith(`${stateDirectory}/`));
    // A pipe or socket of the daemon's own (what child_process gives it), not a terminal or a file others share.
    return stderr !== undefined && /^(pipe|socket):/.test(stderr) && linkOf(`/proc/${host}/fd/2`) === stderr;
  });
}

/** Memory of a daemon and its process host together: what the machine pays for it. */
export function daemonResidentBytes(daemon: number): number {
  const host = hostOf(daemon);
  return residentBytes(daemon) + (host ? residentBytes(host) : 0);
}

/**
 * The machine's pid of the process that a child of the host calls
 * `namespacePid` (its `$$`, `$!`, `pgrep`): the host is the init of a PID
 * namespace of its own with its own /proc where it can be (root), and the
 * tests look from outside. Where it is not, the two are the same. Throws
 * where the process is not found (it exited).
 */
export function hostPidOf(namespacePid: number, daemon: number | InProcessDaemon): number {
  const host = hostOf(daemon);
  if (host === undefined) throw new Error(`no process host of daemon ${typeof daemon === "number" ? daemon : "in this process"}`);
  const namespace = linkOf(`/proc/${host}/ns/pid`);
  if (namespace === linkOf("/proc/self/ns/pid")) return namespacePid;
  const found = inNamespace(namespace).filter((entry) => entry.namespacePid === namespacePid);
  if (found.length !== 1) throw new Error(`${found.length} processes are ${namespacePid} in the PID namespace of host ${host}`);
  return found[0]!.pid;
}

/** Whether the host is the init of a PID namespace of its own. */
export function hostHasPidNamespace(host: number): boolean {
  return linkOf(`/proc/${host}/ns/pid`) !== linkOf("/proc/self/ns/pid");
}

/**
 * What runs in the host's PID namespace besides the host (its init): every
 * process the daemon's children started and left. Empty where the host has
 * no namespace of its own.
 */
export function leftInHostNamespace(host: number): number[] {
  if (!hostHasPidNamespace(host)) return [];
  return inNamespace(linkOf(`/proc/${host}/ns/pid`))
    .filter((entry) => entry.namespacePid !== 1)
    .map((entry) => entry.pid);
}

/** Every process of a PID namespace: the machine's pid and the namespace's. */
function inNamespace(namespace: string | undefined): { pid: number; namespacePid: number }[] {
  const found: { pid: number; namespacePid: number }[] = [];
  if (namespace === undefined) return found;
  for (const entry of readdirSafe("/proc")) {
    if (!/^\d+$/.test(entry) || linkOf(`/proc/${entry}/ns/pid`) !== namespace) continue;
    try {
      const ids = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${entry}/status`, "latin1"))![1]!.trim().split(/\s+/);
      found.push({ pid: Number(entry), namespacePid: Number(ids[ids.length - 1]) });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Every descendant of `pid`, from the children lists of its threads, recursively. */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  for (const pending = [pid]; pending.length > 0; ) {
    const parent = pending.pop()!;
    for (const task of readdirSafe(`/proc/${parent}/task`)) {
      let children = "";
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, "latin1");
      } catch {
        continue;
      }
      for (const child of children.trim().split(" ")) {
        if (child === "") continue;
        found.push(Number(child));
        pending.push(Number(child));
      }
    }
  }
  return found;
}

/** Open descriptors of a process (0 once gone). */
function optionOf(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index >= 0) return args[index + 1];
  return args.find((argument) => argument.startsWith(`${name}=`))?.slice(name.length + 1);
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
