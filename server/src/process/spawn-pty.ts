/** Children on a PTY: one output stream ("pty"), a window size, job control. */
import { closeSync, readSync } from "node:fs";
import tty from "node:tty";
import { SpawnError, type Child, type ChildEvents, type SpawnSpec } from "./child.js";
import { FdWriter } from "./fd-writer.js";
import { nativePty } from "./pty-native.js";
import type { Spawner } from "../spawner/spawner.js";
import { resolveExecutable } from "./resolve-executable.js";

/** The terminal's VEOF character, as node-pty configures it. */
const EOF_CHARACTER = Buffer.from([4]);

/**
 * The program is exec'd by `setsid -c`, which keeps argv[0] as given, so a
 * separate arg0 goes through perl's `exec {file} @argv` (perl-base is in
 * every Debian image, slim ones too).
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

export async function spawnPty(spawner: Spawner, spec: SpawnSpec, events: ChildEvents): Promise<Child> {
  const { file, args } = commandLine(spec);
  // The daemon opens the PTY (no fork); the spawner attaches its slave side to the child.
  let pty: { master: number; slave: number; pty: string };
  try {
    pty = nativePty.open(spec.cols, spec.rows);
  } catch (error) {
    throw new SpawnError((error as Error).message, "EPTY");
  }
  const { master: fd, slave } = pty;
  // Our slave fd stays open until the child has exited: until then the
  // master cannot see a hangup, so reading starts on a live terminal however
  // fast the child is. Closing it then lets EIO mark the end of output once
  // every other holder (grandchildren) has closed theirs too.
  let slaveOpen = true;
  const closeSlave = () => {
    if (!slaveOpen) return;
    slaveOpen = false;
    closeSync(slave);
  };
  let pid: number;
  try {
    ({ pid } = await spawner.spawn(
      { file, args, argv0: undefined, cwd: spec.cwd, env: spec.env, stdio: { kind: "pty", slavePath: pty.pty } },
      (code, signal) => {
        closeSlave();
        events.exited(code, signal);
      },
    ));
  } catch (error) {
    closeSlave();
    closeSync(fd);
    throw error;
  }

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
  };
}
