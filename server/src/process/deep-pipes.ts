/**
 * Deeper pipes for children that write faster than the daemon reads.
 *
 * The daemon reads a pipe and sends what it read on one thread: while it
 * frames and writes a burst to the socket, nobody drains the pipe, and a
 * fast writer blocks on its full 64 KiB pipe. websocketd reads and sends on
 * separate threads, so its child keeps writing. On the 2-core AMD VM, bench
 * section 1 streamed 154 MiB/s through a 64 KiB pipe and 291 through a
 * 1 MiB one (interleaved runs, head -c 64 MiB; websocketd: 296 and 377).
 *
 * Node has no fcntl(), so F_SETPIPE_SZ is set by a small perl helper (perl
 * is already needed for PTY children, spawn-pty.ts), started on first use
 * and fed one descriptor number per line: it opens the daemon's end through
 * /proc (read-write, which never blocks on a pipe), resizes the pipe and
 * closes it again. Fire and forget: a pipe that stays small only streams
 * slower. Only pipes seen full are deepened, and only DEEP_PIPES of them at
 * a time, so the pages they may pin stay well below the kernel's per-user
 * pipe budget (pipe-user-pages-soft, 64 MiB), past which it would give every
 * new pipe of the user only two pages.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolveExecutable } from "./resolve-executable.js";
import { perlCloseInherited } from "./perl-close-inherited.js";

/** Four of the daemon's largest bursts (256 KiB, output-buffers.ts): the default pipe-max-size. */
const DEEP_PIPE_BYTES = 1024 * 1024;
/** Pipes deepened at once: 16 MiB of pipe at most. */
const DEEP_PIPES = 16;
/**
 * F_SETPIPE_SZ, and O_RDWR | O_NONBLOCK, on Linux. It first closes what it
 * inherited above stderr: the daemon's PTY masters lack close-on-exec.
 */
const HELPER = `$| = 1; ${perlCloseInherited()} my $p = getppid(); while (my $fd = <STDIN>) { chomp $fd; if (sysopen(my $h, "/proc/$p/fd/$fd", 2 | 2048)) { fcntl($h, 1031, ${DEEP_PIPE_BYTES}); close($h) } }`;

let helper: ChildProcess | undefined;
let unavailable = process.platform !== "linux";
let deepened = 0;

function startHelper(): ChildProcess | undefined {
  try {
    const perl = resolveExecutable("perl", "/", process.env.PATH);
    const child = spawn(perl, ["-e", HELPER], { stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", () => stop());
    child.on("exit", () => stop());
    child.stdin!.on("error", () => stop());
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    return child;
  } catch {
    unavailable = true;
    return undefined;
  }
}

function stop(): void {
  unavailable = true;
  helper = undefined;
}

/**
 * Asks for the pipe read at `fd` (the daemon's own end) to be deepened.
 * Returns the release to call once the daemon has closed that end, or
 * undefined when the pipe stays as it is.
 */
export function deepenPipe(fd: number): (() => void) | undefined {
  if (unavailable || deepened >= DEEP_PIPES) return undefined;
  helper ??= startHelper();
  if (!helper?.stdin?.writable) return undefined;
  helper.stdin.write(`${fd}\n`);
  deepened++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    deepened--;
  };
}
