/**
 * Downloads: a file on the daemon's machine, read a block at a time with
 * fs/open and fs/readBlock as the browser takes them (save-stream.ts), so a
 * large file never sits whole in the page or in the daemon.
 */
import { decodeBase64, type ExecmuxClient } from "@execmux/client";
import { baseName, RemoteFiles } from "./remote-files.js";
import { saveStream } from "./save-stream.js";
import { transfers, type TransferItem } from "./transfers.js";

/** The daemon's largest fs/readBlock. */
const READ_BLOCK_BYTES = 1024 * 1024;
let handleCounter = 0;

/** A file's bytes as a stream that reads the next block only when pulled; exactly `size` bytes, or an error. */
export function remoteFileStream(client: ExecmuxClient, path: string, size: number, item?: TransferItem): ReadableStream<Uint8Array> {
  const handleId = `download-${Date.now().toString(36)}-${++handleCounter}`;
  let offset = 0;
  let open = false;
  const close = () => {
    if (!open) return;
    open = false;
    void client.request("fs/close", { handleId }).catch(() => undefined);
  };
  item?.signal.addEventListener("abort", close);
  return new ReadableStream<Uint8Array>(
    {
      async start() {
        await client.request("fs/open", { handleId, path });
        open = true;
      },
      async pull(controller) {
        try {
          item?.signal.throwIfAborted();
          if (offset >= size) {
            close();
            controller.close();
            return;
          }
          const len = Math.min(READ_BLOCK_BYTES, size - offset);
          const block = await client.request("fs/readBlock", { handleId, offset, len });
          const bytes = decodeBase64(block.chunk);
          if (bytes.length === 0) throw new Error(`${path} ended at ${offset} of ${size} bytes (it shrank while downloading)`);
          offset += bytes.length;
          item?.progress(offset);
          controller.enqueue(bytes);
        } catch (error) {
          close();
          controller.error(error);
        }
      },
      cancel: close,
    },
    // Two blocks ahead of the browser at most.
    new ByteLengthQueuingStrategy({ highWaterMark: 2 * READ_BLOCK_BYTES }),
  );
}

export async function downloadFile(client: ExecmuxClient, path: string): Promise<void> {
  const name = baseName(path);
  const size = await new RemoteFiles(client).size(path);
  const item = transfers().add("download", name, size, `from ${path}`);
  try {
    await saveStream({ name, size, stream: remoteFileStream(client, path, size, item) });
    item.done();
  } catch (error) {
    item.fail(item.signal.aborted ? "cancelled" : (error as Error).message);
  }
}
