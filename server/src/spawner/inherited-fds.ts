/**
 * Descriptors this process inherited by accident. The daemon holds every
 * PTY master without close-on-exec (node-pty opens them so, and Node cannot
 * set the flag), so a spawner the daemon restarts would inherit every
 * session's master, and pass it on to every pipe child it spawns: one
 * session could type into another's terminal. The daemon's other Node
 * helpers (confined-call-main.ts) close them the same way. Everything Node and libuv open
 * is close-on-exec, the IPC channel too (Node marks it when it takes it), so
 * what lacks the flag above stderr was inherited and is closed, but for the
 * files V8's profiling flags open (ownProfilingFile).
 */
import { closeSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename } from "node:path";

/**
 * V8's profiling files, opened before any JavaScript runs and without
 * close-on-exec: --perf-basic-prof's map (perf-PID.map), --perf-prof's dump
 * (jit-PID.dump) and --prof's log (isolate-0x...-PID-v8.log). Named after
 * this very process, so never inherited. Closed, the next accepted socket
 * would take the number and V8 would write its lines into a client's stream.
 */
const ownProfilingFile = (fd: number) => {
  let name: string;
  try {
    name = basename(readlinkSync(`/proc/self/fd/${fd}`)).replace(/ \(deleted\)$/, "");
  } catch {
    return false;
  }
  const pid = process.pid;
  return name === `perf-${pid}.map` || name === `jit-${pid}.dump` || new RegExp(`^isolate-0x[0-9a-f]+-${pid}-v8\\.log$`).test(name);
};

/** O_CLOEXEC as /proc/PID/fdinfo reports it (octal "flags:"), on Linux. */
const O_CLOEXEC = 0o2000000;

export function closeInheritedDescriptors(): void {
  let entries: string[];
  try {
    entries = readdirSync("/proc/self/fd");
  } catch {
    return; // no /proc: nothing to go by
  }
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    let flags: number;
    try {
      const match = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "latin1"));
      if (!match) continue;
      flags = Number.parseInt(match[1]!, 8);
    } catch {
      continue; // the directory listing's own descriptor, closed by now
    }
    if ((flags & O_CLOEXEC) !== 0 || ownProfilingFile(fd)) continue;
    try {
      closeSync(fd);
    } catch {
      // gone meanwhile
    }
  }
}
