/** Children on a PTY: one output stream ("pty"), a window size, job control. */
import { readSync } from "node:fs";
import tty from "node:tty";
import { SpawnError, type Child, type ChildEvents, type SpawnSpec } from "./child.js";
import { FdWriter } from "./fd-writer.js";
import { nativePty, spawnHelperPath } from "./pty-native.js";
import { resolveExecutable } from "./resolve-executable.js";
import { signalNameOf } from "@execmux/shared";

/** The terminal's VEOF character, as node-pty configures it. */
const EOF_CHARACTER = Buffer.from([4]);

/**
 * forkpty execs argv[0] as given, so a separate arg0 goes through perl's
 * `exec {file} @argv` (perl-base is in every Debian image, slim ones too).
 */
const EXEC_WITH_ARG0 = 'my $f = shift; exec {$f} @ARGV or do { print STDERR "exec $f: $!\\n"; exit 127 }';

function commandLine(spec: SpawnSpec): { file: string; args: string[] } {
  if (spec.arg0 === undefined) return { file: spec.file, args: [...spec.args] };
  let perl: string;
  try {
    perl = resolveExecutable("perl", spec.cwd, process.env.PATH);
  } catch {
    throw new SpawnError("arg0 with tty needs perl on the daemon's PATH", "ENOENT");
  }
  return { file: perl, args: ["-e", EXEC_WITH_ARG0, spec.file, spec.arg0, ...spec.args] };
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
  reader.on("data", (data: Buffer) => events.output("pty", data));
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
