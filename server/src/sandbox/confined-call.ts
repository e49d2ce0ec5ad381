/**
 * Runs one function call inside a sandbox: a short-lived Node process in the
 * same bubblewrap policy a sandboxed process would get, which imports a
 * module, calls one of its exports and reports the result.
 *
 * This is how the fs methods write under a profile that does not write the
 * whole disk (and read under one that does not read it). The path is
 * resolved by the kernel inside the sandbox's mount namespace, where
 * everything outside the writable roots is mounted read-only: no symlink,
 * `..`, or a swap of either between a check and the write can lead
 * anywhere the profile does not allow, and a hard link to a file outside
 * cannot be made (the writable roots are separate mounts: EXDEV). The
 * function is the daemon's own code, so direct and confined calls behave the
 * same.
 *
 * Buffers travel both ways as `{ "$base64": ... }`. An error thrown inside
 * comes back as an Error with the same `code`, `errno`, `syscall` and `path`
 * (ENOENT, EROFS, ...), so callers map it as they map their own fs errors;
 * an RpcError comes back as the same RpcError.
 *
 * Its cost is a process: bwrap and a Node start (about 100 ms on a loaded
 * 2-core VM, mostly Node's startup; modules the helper imports should not
 * pull in the protocol's schemas, which doubled it), so it suits one call
 * per file written, not a stream of small reads; at most a few run at once
 * (helper-slots.ts). The helper is killed when `signal` aborts (the
 * connection closed).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { inPackage } from "../package-root.js";
import { RpcError, connectionClosed } from "../errors/rpc-error.js";
import { bwrapArgs } from "./bwrap-args.js";
import { decodeValue, encodeValue, type CallReport } from "./confined-call-wire.js";
import type { PreparedFsSandbox } from "./prepared-fs-sandbox.js";
import { acquireHelperSlot } from "./helper-slots.js";
import { launchCommand } from "./launcher.js";

/** The helper runs the daemon's modules as tsc built them (dist/), whether or not the daemon itself runs from its bundle. */
const MAIN = inPackage("dist", "sandbox", "confined-call-main.js");

export interface ConfinedCall {
  /** A module specifier the helper can import: `node:fs/promises`, or a file URL of the daemon's own. */
  readonly module: string;
  readonly exportName: string;
  readonly args: readonly unknown[];
}

export class ConfinedCallError extends Error {
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
}

function toError(report: Extract<CallReport, { ok: false }>): Error {
  if (report.error.rpcCode !== undefined) return new RpcError(report.error.rpcCode, report.error.message);
  const error = new ConfinedCallError(report.error.message);
  if (report.error.code !== undefined) error.code = report.error.code;
  if (report.error.errno !== undefined) error.errno = report.error.errno;
  if (report.error.syscall !== undefined) error.syscall = report.error.syscall;
  if (report.error.path !== undefined) error.path = report.error.path;
  return error;
}

/** Calls `call` inside `sandbox`'s policy and resolves with what it returned (in one of the helper slots). */
export async function runConfined(sandbox: PreparedFsSandbox, call: ConfinedCall, signal?: AbortSignal): Promise<unknown> {
  const release = await acquireHelperSlot(signal);
  try {
    return await runHelper(sandbox, call, signal, undefined);
  } finally {
    release();
  }
}

/**
 * The same, but the helper stays alive after it returned until `use` (given
 * what the call returned and the helper's pid as this daemon sees it) has
 * settled: what the call opened inside the sandbox is still open then, at
 * /proc/<pid>/fd/<n>, for the daemon to open in turn (confined-open.ts).
 */
export async function runConfinedHolding<T>(
  sandbox: PreparedFsSandbox,
  call: ConfinedCall,
  signal: AbortSignal | undefined,
  use: (value: unknown, helperPid: number) => Promise<T>,
): Promise<T> {
  const release = await acquireHelperSlot(signal);
  try {
    return (await runHelper(sandbox, call, signal, use)) as T;
  } finally {
    release();
  }
}

type Use = (value: unknown, helperPid: number) => Promise<unknown>;

function runHelper(sandbox: PreparedFsSandbox, call: ConfinedCall, signal: AbortSignal | undefined, use: Use | undefined): Promise<unknown> {
  if (signal?.aborted) return Promise.reject(connectionClosed());
  const command = launchCommand(sandbox.tools, bwrapArgs(sandbox.policy, "/"), [process.execPath, MAIN]);
  return new Promise((resolve, reject) => {
    // A group of its own: an abort kills bwrap and what it started together. Killing bwrap alone while
    // it set the sandbox up left its child (the namespace's first process) waiting on an eventfd only
    // bwrap would write, for ever, with no parent.
    const child = spawn(command.file, command.args, { stdio: ["pipe", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, detached: true });
    const abort = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL"); // the group is gone already, or the child never started
      }
    };
    signal?.addEventListener("abort", abort, { once: true });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let outcome: Promise<unknown> | undefined;
    child.stdout.on("data", (data: Buffer) => {
      stdout.push(data);
      // A held helper's report is its first line; it waits for its stdin to end before exiting.
      if (use && !outcome && data.includes(10)) {
        outcome = settleHeld(Buffer.concat(stdout).toString("utf8").split("\n")[0]!, child.pid!, use);
        void outcome.finally(() => child.stdin.end()).catch(() => undefined);
      }
    });
    child.stderr.on("data", (data: Buffer) => stderr.push(data));
    child.on("error", reject);
    child.on("close", (code, exitSignal) => {
      signal?.removeEventListener("abort", abort);
      if (signal?.aborted) {
        reject(connectionClosed());
        return;
      }
      if (outcome) {
        outcome.then(resolve, reject);
        return;
      }
      const text = Buffer.concat(stdout).toString("utf8");
      let report: CallReport;
      try {
        report = JSON.parse(text) as CallReport;
      } catch {
        const detail = Buffer.concat(stderr).toString("utf8").trim() || `exit ${code ?? exitSignal}`;
        reject(new Error(`the sandboxed helper failed: ${detail}`));
        return;
      }
      if (report.ok) resolve(decodeValue(report.value));
      else reject(toError(report));
    });
    // EPIPE when the helper died before reading: its exit says why.
    child.stdin.on("error", () => undefined);
    const request = JSON.stringify({ module: call.module, exportName: call.exportName, args: encodeValue(call.args), ...(use ? { hold: true } : {}) });
    if (use) child.stdin.write(`${request}\n`);
    else child.stdin.end(request);
  });
}

/** A held helper's report: a failure as for any call; a result handed to `use` while the helper (pid `launched`'s descendant) still lives. */
async function settleHeld(line: string, launched: number, use: Use): Promise<unknown> {
  const report = JSON.parse(line) as CallReport & { ok: boolean };
  if (!report.ok) throw toError(report as Extract<CallReport, { ok: false }>);
  const value = decodeValue((report as Extract<CallReport, { ok: true }>).value) as { pid?: unknown };
  if (typeof value?.pid !== "number") throw new Error("the sandboxed helper did not report its pid");
  const helperPid = outerPidOf(launched, value.pid);
  if (helperPid === undefined) throw new Error("the sandboxed helper's process was not found");
  return use(value, helperPid);
}

/**
 * The pid, as this daemon sees it, of the descendant of `root` whose pid in
 * its own (the sandbox's) namespace is `inner`: /proc's NSpid lists a
 * process's pid in every namespace from the reader's down to its own.
 */
function outerPidOf(root: number, inner: number): number | undefined {
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    let status = "";
    let children = "";
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8");
    } catch {
      continue;
    }
    const nspids = /^NSpid:\s+(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
    if (pid !== root && nspids.length > 1 && nspids.at(-1) === inner) return pid;
    for (const child of children.trim().split(/\s+/).filter(Boolean)) queue.push(Number(child));
  }
  return undefined;
}
