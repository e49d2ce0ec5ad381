/** Children on a PTY: one output stream ("pty"), a window size, job control. */
import { readSync } from "node:fs";
import tty from "node:tty";
import { SpawnError, type Child, type ChildEvents, type SpawnSpec } from "./child.js";
import { FdWriter } from "./fd-writer.js";
import { nativePty, spawnHelperPath } from "./pty-native.js";
import { resolveExecutable } from "./resolve-executable.js";
import { signalNameOf } from "@execmux/shared";

/**
 * The most one read of a PTY master returns: the line discipline's buffer
 * (N_TTY_BUF_SIZE, 4 KiB) less the byte n_tty keeps free. A read this large
 * means the child writes faster than the daemon reads: more is waiting.
 */
const FULL_READ_BYTES = 4096 - 1;

/** The terminal's VEOF character, as node-pty configures it. */
const EOF_CHARACTER = Buffer.from([4]);

/**
 * Every PTY child starts as perl (perl-base is in every Debian image, slim
 * ones too), which execs the program once three things are done that
 * forkpty does not do and Node cannot ask of it:
 * - it enters the child's cgroup (process-trees.ts), before anything of the
 *   program runs, so nothing it starts is ever outside;
 * - it closes every descriptor above stderr: node-pty opens PTY masters
 *   without close-on-exec, so every PTY child would otherwise inherit the
 *   master of every other session's terminal, and could type into it;
 * - `exec {file} @argv` sets argv[0] apart from the file (arg0), and
 *   searches PATH like execvp when the file has no slash.
 * Arguments: cgroup directory ("" for none), file, argv[0], the rest.
 * (A `my` variable is visible only from the next statement on, hence the
 * separate declarations.)
 */
const PTY_EXEC = [
  'my ($cg, $f, @argv) = @ARGV;',
  'if ($cg ne "") { my $p; open($p, ">", "$cg/cgroup.procs") && print($p "0") && close($p) or do { print STDERR "execmux: cannot enter cgroup $cg: $!\\n"; exit 127 } }',
  'opendir(my $d, "/proc/self/fd") or do { print STDERR "execmux: /proc/self/fd: $!\\n"; exit 127 };',
  'my @fds = grep { /^\\d+$/ && $_ > 2 } readdir($d); closedir($d);',
  'for my $fd (@fds) { my $h; open($h, "+<&=", $fd) and close($h) }',
  'exec {$f} @argv or do { print STDERR "exec $f: $!\\n"; exit 127 }',
].join(" ");

let perlPath: string | undefined;

function commandLine(spec: SpawnSpec): { file: string; args: string[] } {
  try {
    perlPath ??= resolveExecutable("perl", "/", process.env.PATH);
  } catch {
    throw new SpawnError("a tty needs perl on the daemon's PATH (it closes other terminals' descriptors before the program runs)", "ENOENT");
  }
  return { file: perlPath, args: ["-e", PTY_EXEC, spec.cgroup ?? "", spec.file, spec.arg0 ?? spec.file, ...spec.args] };
}

/**
 * libuv ends a stream when poll reports POLLHUP after a short read (its
 * UV_HANDLE_READ_PARTIAL shortcut). A PTY master returns at most one kernel
 * buffer per read, so every read is short, and the hangup that follows the
 * child's exit ends the stream while the kernel still holds output. Read
 * what is left directly, until the kernel says EIO (or nothing is left).
 */
function drainAfterHangup(fd: number, deliver: (data: Buffer) => void): void {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let length: number;
    try {
      length = readSync(fd, buffer);
    } catch {
      return; // EIO: all read; EAGAIN: nothing left to read now
    }
    if (length === 0) return;
    deliver(Buffer.from(buffer.subarray(0, length)));
  }
}

export async function spawnPty(spec: SpawnSpec, events: ChildEvents): Promise<Child> {
  const { file, args } = commandLine(spec);
  const envPairs = Object.keys(spec.env).map((name) => `${name}=${spec.env[name]}`);
  let forked: { fd: number; pid: number };
  try {
    forked = nativePty.fork(file, args, envPairs, spec.cwd, spec.cols, spec.rows, -1, -1, true, spawnHelperPath, (code, signo) => {
      const signal = signo > 0 ? ((signalNameOf(signo) ?? null) as NodeJS.Signals | null) : null;
      events.exited(signal ? null : code, signal);
    });
  } catch (error) {
    throw new SpawnError((error as Error).message, "EPTY");
  }

  const { fd, pid } = forked;
  const reader = new tty.ReadStream(fd);
  let ended = false;
  const writer = new FdWriter(fd, () => undefined);

  // The kernel reports EIO on the master once every slave fd is closed and
  // the buffer is drained: that, not the child's exit, is the end of output.
  const end = () => {
    if (ended) return;
    ended = true;
    writer.close();
    destroy();
    events.streamEnded("pty");
  };
  // Node turns a read error into destroy(), which throws away output already
  // read from the kernel but still queued in the stream. For a PTY master, EIO
  // just means "the other side is closed and everything was read": treat it as
  // end of file so the queue drains first.
  const destroy = reader.destroy.bind(reader);
  reader.destroy = (error?: Error) => {
    if ((error as NodeJS.ErrnoException | undefined)?.code === "EIO") {
      reader.push(null);
      return reader;
    }
    // Any other read error: take what the kernel still holds while the fd is open.
    if (error && !ended) drainAfterHangup(fd, (data) => events.output("pty", data));
    return destroy(error);
  };
  reader.on("data", (data: Buffer) => events.output("pty", data, data.length >= FULL_READ_BYTES ? "more-waiting" : undefined));
  reader.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EAGAIN") return;
    end();
  });
  reader.on("end", () => {
    drainAfterHangup(fd, (data) => events.output("pty", data));
    end();
  });
  reader.on("close", end);

  return {
    pid,
    streams: ["pty"],
    get stdinOpen() {
      return !ended;
    },
    get stdinQueuedBytes() {
      return writer.queuedBytes;
    },
    whenStdinBelow(bytes) {
      return writer.whenBelow(bytes);
    },
    write(data) {
      writer.write(data);
    },
    closeStdin() {
      writer.write(EOF_CHARACTER);
    },
    resize(cols, rows) {
      if (ended) return;
      try {
        nativePty.resize(fd, cols, rows);
      } catch {
        // The terminal went away between the check and the ioctl.
      }
    },
    pause() {
      reader.pause();
    },
    resume() {
      reader.resume();
    },
    limitChunks() {
      // A PTY read returns at most a few KiB.
    },
  };
}
