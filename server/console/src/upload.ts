/**
 * Uploads: a File from the page into a directory on the daemon's machine, a
 * block at a time (File.slice reads each from disk only when it is sent), so
 * neither the page nor the daemon ever holds more than a few blocks of it.
 *
 * Two ways to write, chosen by what the daemon says it can do:
 * - upstream's streamed writes (`fileWriteStreaming`): fs/open with
 *   `mode: "replace"`, fs/writeBlock at increasing offsets (a few in flight),
 *   fs/close;
 * - otherwise a `cat` on a pipe writes the file: process/write is answered
 *   only once the daemon's bounded stdin buffer has room, so the page is
 *   paced by the disk, one block in flight.
 */
import { encodeBase64, type ExecmuxClient, type ProcessHandle } from "@execmux/client";
import { joinPath, RemoteFiles } from "./remote-files.js";
import { transfers } from "./transfers.js";

interface BlockSink {
  /** Largest block one write takes. */
  readonly blockBytes: number;
  /** Writes that may be in flight at once. */
  readonly inFlight: number;
  write(offset: number, bytes: Uint8Array): Promise<void>;
  finish(): Promise<void>;
  /** Gives up: the partial file is removed. */
  abort(): Promise<void>;
}

/** Upstream's limit on one fs/writeBlock. */
const WRITE_BLOCK_BYTES = 1024 * 1024;
/** Well under the daemon's default 1 MiB of unread input per process. */
const PIPE_BLOCK_BYTES = 256 * 1024;

type RawRequest = (method: string, params: unknown) => Promise<unknown>;

let handleCounter = 0;

async function streamedWrite(client: ExecmuxClient, path: string): Promise<BlockSink> {
  // fs/open's `mode` and fs/writeBlock are upstream's (0.171) and not in this build's method table yet.
  const request = client.request.bind(client) as unknown as RawRequest;
  const handleId = `upload-${Date.now().toString(36)}-${++handleCounter}`;
  await request("fs/open", { handleId, path, mode: "replace" });
  const close = () => request("fs/close", { handleId }).then(() => undefined);
  return {
    blockBytes: WRITE_BLOCK_BYTES,
    // The daemon writes a connection's blocks one at a time: two keep it busy, and the page holds two.
    inFlight: 2,
    write: (offset, bytes) => request("fs/writeBlock", { handleId, offset, chunk: encodeBase64(bytes) }).then(() => undefined),
    finish: close,
    abort: async () => {
      await close().catch(() => undefined);
      await client.request("fs/remove", { path, recursive: false, force: true }).catch(() => undefined);
    },
  };
}

async function pipedWrite(client: ExecmuxClient, path: string): Promise<BlockSink> {
  const cat: ProcessHandle = await client.start({
    argv: ["/bin/sh", "-c", 'exec cat > "$1"', "execmux-upload", path],
    pipeStdin: true,
    cwd: "/",
  });
  let errors = "";
  cat.onText((text, stream) => {
    if (stream === "stderr" && errors.length < 4096) errors += text;
  });
  return {
    blockBytes: PIPE_BLOCK_BYTES,
    inFlight: 1,
    write: async (_offset, bytes) => {
      const status = await cat.write(bytes);
      if (status !== "accepted") throw new Error(errors.trim() || `the writer stopped (${status})`);
    },
    finish: async () => {
      await cat.closeStdin();
      const code = await cat.wait();
      if (code !== 0) throw new Error(errors.trim() || `the writer exited with code ${code}`);
    },
    abort: async () => {
      await cat.terminate().catch(() => undefined);
      await cat.wait().catch(() => undefined);
      await client.request("fs/remove", { path, recursive: false, force: true }).catch(() => undefined);
    },
  };
}

/** Uploads `file` into `directory` under its own name (or "name (1).ext" if that is taken); resolves with the path. */
export async function uploadFile(client: ExecmuxClient, file: File, directory: string): Promise<string> {
  const files = new RemoteFiles(client);
  const name = await files.freeName(directory, file.name);
  const path = joinPath(directory, name);
  const item = transfers().add("upload", name, file.size, `to ${directory}`);
  let sink: BlockSink | undefined;
  try {
    const streamed = await files.streamsWrites();
    // Which way it went, for the curious (and the tests).
    item.element.dataset.via = streamed ? "fs/writeBlock" : "pipe";
    sink = streamed ? await streamedWrite(client, path) : await pipedWrite(client, path);
    await writeBlocks(file, sink, item.signal, (sent) => item.progress(sent));
    await sink.finish();
    item.done();
    return path;
  } catch (error) {
    await sink?.abort();
    item.fail(item.signal.aborted ? "cancelled" : (error as Error).message);
    throw error;
  }
}

/** Sends the file in order, at most `sink.inFlight` blocks at a time; `progress` gets the bytes written so far. */
async function writeBlocks(file: Blob, sink: BlockSink, signal: AbortSignal, progress: (bytes: number) => void): Promise<void> {
  let next = 0;
  let written = 0;
  const worker = async () => {
    while (next < file.size) {
      signal.throwIfAborted();
      const offset = next;
      next = Math.min(file.size, offset + sink.blockBytes);
      const bytes = new Uint8Array(await file.slice(offset, next).arrayBuffer());
      await sink.write(offset, bytes);
      written += bytes.length;
      progress(written);
    }
  };
  await Promise.all(Array.from({ length: sink.inFlight }, worker));
  signal.throwIfAborted();
}
