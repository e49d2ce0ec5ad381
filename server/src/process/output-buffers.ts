/**
 * Where a pipe child's output is read into: buffers with room in front for a
 * binary frame's header (see shared/src/binary-frame.ts), so that a large
 * chunk goes out as a frame without being copied, and without Node
 * allocating and zero-filling a fresh 64 KiB for every read (in a profile of
 * bench section 1, a 256 MiB stream, that copy and that fill were the
 * daemon's largest costs outside the kernel).
 */
import { Socket, type OnReadOpts, type SocketConstructorOpts } from "node:net";
import { BINARY_HEADER_BYTES, ProcessIdSchema } from "@execmux/shared";

/**
 * Read buffer sizes: a read that fills its buffer moves the next one up a
 * size, a read smaller than the smallest moves it back down. An idle or
 * interactive pipe holds a few hundred bytes; a stream reads a pipe's whole
 * capacity (64 KiB) at a time. Only the largest have headroom.
 */
const READ_SIZES = [256, 4 * 1024, 64 * 1024] as const;
const LARGE_READ_BYTES = READ_SIZES[2];
/** The largest header: a processId of the longest length, every character 4 bytes of UTF-8. */
const HEADROOM_BYTES = BINARY_HEADER_BYTES + 4 * (ProcessIdSchema.maxLength ?? 256);
/**
 * A read at least this full keeps its buffer; a smaller one is copied out,
 * so that retained output never pins much more memory than its own size
 * (a stream's reads fill the whole 64 KiB, a pipe's capacity).
 */
const KEEP_BYTES = (LARGE_READ_BYTES * 15) / 16;

/** Chunks that have HEADROOM_BYTES in front of them which no one else uses. */
const withHeadroom = new WeakSet<Buffer>();

/**
 * A non-blocking read end as a Socket that emits "data" as usual, read with
 * `onread` into buffers with headroom. A buffer whose read was copied out is
 * reused for the next read. Node asks for the next buffer as soon as a read
 * is done, so an idle pipe holds one (a small one, see READ_SIZES).
 */
export function readableWithHeadroom(fd: number): Socket {
  let current: Buffer | undefined;
  let size = 0;
  const allocate = () =>
    READ_SIZES[size] === LARGE_READ_BYTES
      ? Buffer.allocUnsafe(HEADROOM_BYTES + LARGE_READ_BYTES).subarray(HEADROOM_BYTES)
      : Buffer.allocUnsafeSlow(READ_SIZES[size]!);
  // Node 20 takes `onread` here too, though its types list it only for connect().
  const options: SocketConstructorOpts & { onread: OnReadOpts } = {
    fd,
    readable: true,
    writable: false,
    onread: {
      buffer: () => (current ??= allocate()),
      callback: (bytes: number) => {
        const read = current!;
        let chunk: Buffer;
        if (bytes >= KEEP_BYTES) {
          chunk = read.subarray(0, bytes);
          withHeadroom.add(chunk);
          current = undefined;
        } else {
          chunk = Buffer.allocUnsafe(bytes);
          read.copy(chunk, 0, 0, bytes);
          const resized = bytes === read.length ? Math.min(size + 1, READ_SIZES.length - 1) : bytes < READ_SIZES[0] ? 0 : size;
          if (resized !== size) {
            size = resized;
            current = undefined;
          }
        }
        // onread bypasses the stream's own "data"; its users expect one.
        socket.emit("data", chunk);
        return true;
      },
    },
  };
  const socket = new Socket(options);
  return socket;
}

/**
 * `chunk` with `headerBytes` of its headroom in front, as one buffer, or
 * undefined when it has none (the header then has to be copied together with
 * the chunk). The caller writes the header into the first `headerBytes`; a
 * chunk sent again (a replay) gets the same header, so a frame still waiting
 * in a socket's buffer is not changed by that.
 */
export function frameAround(chunk: Buffer, headerBytes: number): Buffer | undefined {
  if (!withHeadroom.has(chunk) || headerBytes > HEADROOM_BYTES) return undefined;
  return Buffer.from(chunk.buffer, chunk.byteOffset - headerBytes, headerBytes + chunk.length);
}
