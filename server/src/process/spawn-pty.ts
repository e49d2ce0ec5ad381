/**
 * Children on a PTY: one output stream ("pty"), a window size, job control.
 * The daemon opens the terminal and keeps the master; the spawner process
 * forks the child onto the slave (spawner-main.ts), through the wrapper in
 * pty-wrapper.ts, so the daemon itself never forks.
 */
import { closeSync, constants, openSync } from "node:fs";
import tty from "node:tty";
import type { Spawner } from "../spawner/spawner.js";
import { SpawnError, type Child, type ChildEvents, type SpawnSpec } from "./child.js";
import { FdWriter } from "./fd-writer.js";
import { readNonBlocking, takeFramedSlab, withFrameRoom } from "./output-buffers.js";
import { nativePty } from "./pty-native.js";
import { releaseSlab } from "./slab-pool.js";
import { ptyCommandLine } from "./pty-wrapper.js";

/**
 * The most one read of a PTY master returns: the line discipline's buffer
 * (N_TTY_BUF_SIZE, 4 KiB) less the byte n_tty keeps free. A read this large
 * means the child writes faster than the daemon reads: more is waiting.
 */
const FULL_READ_BYTES = 4096 - 1;

/**
 * How far a full read is followed by reads of our own (readBurst). Each
 * read that libuv makes is one call into JavaScript through the stream
 * machinery, which costs more than its 4 KiB: reading on directly while the
 * kernel has more makes a fast writer's burst one call. On the 2-core AMD
 * VM, PTY streaming went from 0.42 to 0.56 of a bare node-pty read loop
 * (bench section 2's shape, interleaved runs), and the daemon's reads went
 * from one per event-loop turn to about eight.
 */
const BURST_BYTES = 64 * 1024;

/**
 * Where bursts are read into. Reads are synchronous, so one buffer serves
 * every terminal; it is replaced only when a burst is handed on in it. A
 * pooled slab with a frame header's room in front (output-buffers.ts), as a
 * pipe's reads: a fresh 64 KiB per burst, and a fresh frame to copy it into,
 * were external memory the garbage collector chased (its marking threads
 * took a tenth of the machine while a PTY streamed, on the 2-core AMD EPYC
 * VM) and pages the kernel hands over one fault at a time.
 */
let scratch: Buffer | undefined;

/**
 * `first` (a full read) and whatever the terminal holds right after it, up
 * to `capBytes` (at most BURST_BYTES). Stops at EAGAIN (nothing more now) or
 * EIO (the child's side is closed: libuv's next read sees it too and ends
 * the stream). `full`: the burst filled up, so the writer is still ahead.
 */
function readBurst(fd: number, first: Buffer, capBytes: number): { data: Buffer; full: boolean } {
  const burst = (scratch ??= takeFramedSlab(BURST_BYTES));
  let length = first.copy(burst);
  let full = true;
  while (capBytes - length >= FULL_READ_BYTES) {
    const read = readNonBlocking(fd, burst, length, capBytes - length);
    if (read === 0) {
      full = false;
      break;
    }
    length += read;
  }
  if (length === first.length) return { data: first, full };
  // Retained output keeps its buffer alive: a burst under three quarters of
  // it is copied out (so it pins at most about a third more than its size, with the header room).
  if (length * 4 < BURST_BYTES * 3) return { data: Buffer.from(burst.subarray(0, length)), full };
  scratch = undefined;
  return { data: withFrameRoom(burst.subarray(0, length)), full };
}

/** The terminal's VEOF character, as node-pty configures it. */
const EOF_CHARACTER = Buffer.from([4]);

/**
 * libuv ends a stream when poll reports POLLHUP after a short read (its
 * UV_HANDLE_READ_PARTIAL shortcut). A PTY master returns at most one kernel
 * buffer per read, so every read is short, and the hangup that follows the
 * child's exit ends the stream while the kernel still holds output. Read
 * what is left directly, until the kernel says EIO (or nothing is left).
 */
function drainAfterHangup(fd: number, deliver: (data: Buffer) => void): void {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  // 0: EIO (all read) or EAGAIN (nothing left to read now).
  for (let length; (length = readNonBlocking(fd, buffer, 0, buffer.length)) > 0; ) deliver(Buffer.from(buffer.subarray(0, length)));
}

/**
 * A new terminal: the master as openpty made it (Node cannot set
 * close-on-exec, so the spawner closes what it inherits, inherited-fds.ts),
 * and the slave reopened by path, close-on-exec, so nothing the daemon runs
 * meanwhile inherits it.
 */
function openTerminal(cols: number, rows: number): { master: number; slave: number; path: string } {
  let opened: { master: number; slave: number; pty: string };
  try {
    opened = nativePty.open(cols, rows);
  } catch (error) {
    throw new SpawnError((error as Error).message, "EPTY");
  }
  try {
    // O_NOCTTY: the daemon may lead a session without a terminal, and must not take this one.
    return { master: opened.master, slave: openSync(opened.pty, constants.O_RDWR | constants.O_NOCTTY), path: opened.pty };
  } catch (error) {
    closeSync(opened.master);
    throw new SpawnError((error as Error).message, "EPTY");
  } finally {
    closeSync(opened.slave);
  }
}

export async function spawnPty(spawner: Spawner, spec: SpawnSpec, events: ChildEvents): Promise<Child> {
  const { file, args } = ptyCommandLine(spec);
  const terminal = openTerminal(spec.cols, spec.rows);
  const fd = terminal.master;
  let pid: number;
  try {
    pid = await spawner.spawnOnTerminal({ file, args, argv0: undefined, cwd: spec.cwd, env: spec.env, cgroup: spec.cgroup }, terminal.path, (code, signal) =>
      events.exited(code, signal),
    );
  } catch (error) {
    closeSync(fd);
    throw error;
  } finally {
    // Held until the child holds the slave (from its fork on): with no slave
    // open, a read of the master would fail with EIO, the end of output.
    closeSync(terminal.slave);
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
  /** Flow control's bound on one chunk (limitChunks), for bursts. */
  let burstCap = BURST_BYTES;
  reader.on("data", (data: Buffer) => {
    const fullRead = data.length >= FULL_READ_BYTES;
    // Read on only when nothing read before waits in the stream still: what
    // is read now would overtake it. (A paused tty.ReadStream holds one read.)
    if (!fullRead || reader.readableLength > 0) return events.output("pty", data, fullRead ? "more-waiting" : undefined);
    const burst = readBurst(fd, data, burstCap);
    events.output("pty", burst.data, burst.full ? "more-waiting" : undefined);
    // The reader's hold on the slab it handed on: whoever keeps the chunk
    // took a hold of its own. (A no-op for a chunk that is no slab: the
    // first read, or a burst copied out.)
    releaseSlab(burst.data);
  });
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
    limitChunks(bytes) {
      // A single read may still exceed a smaller bound: the kernel decides its size.
      burstCap = Math.min(BURST_BYTES, Math.max(FULL_READ_BYTES, bytes));
    },
  };
}
