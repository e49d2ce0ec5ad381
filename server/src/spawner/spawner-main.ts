/**
 * The spawner: a small helper process that forks every child for the
 * daemon, on pipes or on a terminal the daemon opened (spawn-pty.ts).
 *
 * fork() copies the parent's page tables and libuv waits for the child's
 * exec, all on the event loop, so spawning from the daemon itself gets
 * slower and stalls everything longer the more memory the daemon holds
 * (retained output). This process stays small, so spawning costs the same
 * whatever the daemon holds, and the daemon's event loop only exchanges a
 * few IPC messages. Each pipe is a FIFO the daemon opens by name (see
 * protocol.ts for why).
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { closeSync, constants, existsSync, openSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupPopulated, enterCgroup, ownCgroupDirectory } from "../process/cgroup-paths.js";
import { removeDaemonCgroup } from "../process/stale-cgroups.js";
import { FifoPool, openBothEnds } from "./fifo-pipe.js";
import { closeInheritedDescriptors } from "./inherited-fds.js";
import { mountOwnProc, outerPidOfNewestChild } from "./outer-pids.js";
import { CGROUP_ROOT_ENV, EXIT_LEAVING_CHILDREN, FIFO_DIRECTORY_ENV, OWN_PROC_ENV, type ChildPipes, type DaemonMessage, type SpawnRequest, type SpawnerMessage } from "./protocol.js";

const fifoDirectory = process.env[FIFO_DIRECTORY_ENV];
if (!fifoDirectory) {
  process.stderr.write(`execmux spawner: ${FIFO_DIRECTORY_ENV} is not set; this process is started by the daemon\n`);
  process.exit(1);
}
closeInheritedDescriptors();
if (process.env[OWN_PROC_ENV]) {
  try {
    mountOwnProc();
  } catch (error) {
    // The daemon tried the same mount before asking for it; children still start, seeing the outer /proc.
    process.stderr.write(`execmux spawner: cannot mount the PID namespace's /proc (${(error as Error).message.split("\n")[0]}); children see the host's pids in /proc\n`);
  }
}
const fifos = new FifoPool(fifoDirectory);
/** The daemon's cgroup directory (every child's cgroup is below it), and this helper's own cgroup. */
const cgroupRoot = process.env[CGROUP_ROOT_ENV];
const homeCgroup = cgroupRoot ? ownCgroupDirectory() : undefined;

const send = (message: SpawnerMessage) => {
  if (process.connected) process.send!(message);
};

/**
 * The daemon's ends of a child's pipes, held here until the daemon has
 * opened its own: until then the child must see neither EOF on stdin nor
 * EPIPE on stdout.
 */
interface Held {
  readonly fds: number[];
  readonly paths: string[];
  readonly timer: NodeJS.Timeout;
}
const held = new Map<number, Held>();
/** A daemon that never says "release" (it died meanwhile) does not leak them. */
const HOLD_LIMIT_MS = 30_000;

function release(id: number): void {
  const entry = held.get(id);
  if (!entry) return;
  held.delete(id);
  clearTimeout(entry.timer);
  for (const fd of entry.fds) closeSync(fd);
  for (const path of entry.paths) rmSync(path, { force: true });
}

/**
 * Forks the child in a session and process group of its own. Node's spawn
 * forks synchronously, and a child is born in its parent's
 * cgroup: so this helper moves itself into the child's cgroup for the fork
 * and back right after, and not even a grandchild forked before the child
 * could be moved is outside. No other fork can happen in between (one thread
 * runs JavaScript).
 */
function spawnDetached(request: SpawnRequest, stdio: StdioOptions): ChildProcess {
  const fork = () => {
    const child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      ...(request.argv0 !== undefined ? { argv0: request.argv0 } : {}),
      stdio,
      // A new session and process group, so the whole tree can be signalled.
      detached: true,
    });
    // Now, while it is the newest in this process's children list (outer-pids.ts).
    if (child.pid !== undefined) outerPids.set(child, lookUpOuterPid(child.pid));
    return child;
  };
  if (request.cgroup === undefined) return fork();
  if (!homeCgroup) throw Object.assign(new Error("the spawner cannot find its own cgroup"), { code: "ECGROUP" });
  enterCgroup(request.cgroup);
  try {
    return fork();
  } finally {
    enterCgroup(homeCgroup);
  }
}

/** Each child's pid as the daemon sees it, or why it could not be found. */
const outerPids = new WeakMap<ChildProcess, number | Error>();

function lookUpOuterPid(pid: number): number | Error {
  try {
    return outerPidOfNewestChild() ?? pid;
  } catch (error) {
    return error as Error;
  }
}

/** The FIFOs of a child; if they vanished with their directory since they were made, it is made again (once). */
async function takeFifosChecked(request: SpawnRequest): Promise<ChildPipes> {
  const take = async () => ({ stdin: request.pipeStdin ? await fifos.take() : undefined, stdout: await fifos.take(), stderr: await fifos.take() });
  const pipes = await take();
  if ([pipes.stdin, pipes.stdout, pipes.stderr].every((path) => path === undefined || existsSync(path))) return pipes;
  fifos.recreate();
  return take();
}

async function spawnWithPipes(request: SpawnRequest): Promise<{ child: ChildProcess; pipes: ChildPipes }> {
  const pipes = await takeFifosChecked(request);
  const childEnds: number[] = [];
  const entry: Held = {
    fds: [],
    paths: [pipes.stdin, pipes.stdout, pipes.stderr].filter((path) => path !== undefined),
    timer: setTimeout(() => release(request.id), HOLD_LIMIT_MS).unref(),
  };
  held.set(request.id, entry);
  /** Opens a pipe: `childReads` says which end is the child's; the other is held for the daemon. */
  const open = (path: string, childReads: boolean) => {
    const { read, write } = openBothEnds(path);
    childEnds.push(childReads ? read : write);
    entry.fds.push(childReads ? write : read);
    return childReads ? read : write;
  };
  try {
    const stdin = pipes.stdin === undefined ? "ignore" : open(pipes.stdin, true);
    const stdout = open(pipes.stdout, false);
    const stderr = open(pipes.stderr, false);
    // A closed stdin is /dev/null: the child reads EOF at once.
    return { child: spawnDetached(request, [stdin, stdout, stderr]), pipes };
  } catch (error) {
    release(request.id);
    throw error;
  } finally {
    // The child has its own copies now (or never will).
    for (const fd of childEnds) closeSync(fd);
  }
}

/**
 * A child whose stdin, stdout and stderr are the terminal at
 * `request.terminal`; it makes it its controlling terminal itself (the PTY
 * wrapper, pty-wrapper.ts), once setsid has made it a session leader. The
 * child holds the slave from the fork on, so the daemon may close its own
 * copy once it hears "spawned" without the master ever seeing a hangup.
 */
function spawnOnTerminal(request: SpawnRequest): { child: ChildProcess; pipes: undefined } {
  // O_NOCTTY: this helper leads a session without a terminal, and must not take the child's.
  const slave = openSync(request.terminal!, constants.O_RDWR | constants.O_NOCTTY);
  try {
    return { child: spawnDetached(request, [slave, slave, slave]), pipes: undefined };
  } finally {
    closeSync(slave);
  }
}

/** Children still running, so they can be killed if the daemon dies. */
const running = new Set<number>();

/** Nothing a request holds may take this process down: a throw fails that request alone. */
process.on("message", (message: DaemonMessage) => {
  try {
    onMessage(message);
  } catch (error) {
    if (message.type === "spawn") {
      const failure = error as NodeJS.ErrnoException;
      send({ type: "failed", id: message.id, code: failure.code ?? "EUNKNOWN", message: failure.message });
    }
  }
});

function onMessage(message: DaemonMessage): void {
  if (message.type === "release") return release(message.id);
  const request = message;
  const reportFailure = (error: NodeJS.ErrnoException) =>
    send({ type: "failed", id: request.id, code: error.code ?? "EUNKNOWN", message: error.message });
  const started = request.terminal === undefined ? spawnWithPipes(request) : Promise.resolve().then(() => spawnOnTerminal(request));
  started.then(
    ({ child, pipes }) => {
      child.once("error", (error: NodeJS.ErrnoException) => {
        release(request.id);
        reportFailure(error);
      });
      // Known from here, so a kill of this helper takes it along even before it is reported.
      if (child.pid !== undefined) running.add(child.pid);
      // The daemon's pid for it, looked up as it was forked, before anything could reap it.
      const pid = outerPids.get(child);
      if (pid instanceof Error) {
        child.kill("SIGKILL");
        running.delete(child.pid!); // its exit is not awaited: the pid may be reused
        release(request.id);
        return reportFailure(pid as NodeJS.ErrnoException);
      }
      child.once("spawn", () => send({ type: "spawned", id: request.id, pid: pid!, pipes }));
      child.once("exit", (code, signal) => {
        running.delete(child.pid!);
        send({ type: "exit", id: request.id, code, signal });
      });
    },
    reportFailure,
  );
}

/**
 * The daemon is gone: every child goes with it rather than be left an
 * orphan, and so do the FIFOs and the FIFO directory. With cgroups, one
 * write kills everything the daemon ever started, PTY children and
 * whatever they left behind too.
 */
function killAllAndExit(): never {
  for (const id of [...held.keys()]) release(id);
  fifos.discard();
  rmSync(fifoDirectory!, { recursive: true, force: true });
  if (cgroupRoot) killCgroupTree(cgroupRoot);
  for (const pid of running) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  process.exit(0);
}

/** Kills the daemon's cgroup directory whole and removes it once empty (waiting a second at most). */
function killCgroupTree(root: string): void {
  try {
    writeFileSync(join(root, "cgroup.kill"), "1");
  } catch {
    return; // gone already
  }
  const deadline = Date.now() + 1_000;
  while (cgroupPopulated(root) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  // If something is still dying, the next daemon started in this cgroup removes it (stale-cgroups.ts).
  removeDaemonCgroup(root);
}

// The daemon is gone (even killed outright: the IPC channel closes with it).
process.on("disconnect", killAllAndExit);
// Signalled on its own (it has a process group of its own, so this is not
// the daemon's shutdown): while the daemon lives its children are the
// daemon's (it holds their pipes and adopts them), so they are left running
// and only this process goes; the daemon starts another.
function exitLeavingChildren(): never {
  for (const id of [...held.keys()]) release(id);
  fifos.discard();
  process.exit(EXIT_LEAVING_CHILDREN);
}
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  process.on(signal, () => (process.connected ? exitLeavingChildren() : killAllAndExit()));
}
