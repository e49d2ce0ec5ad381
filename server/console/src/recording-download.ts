/**
 * A tab's recording: the process's retained output, with the time the
 * daemon read each chunk (process/read's `timestamps`), written as an
 * asciicast v2 file and saved as it is read, a page of output at a time.
 */
import { decodeBase64, type ExecmuxClient, type ResultOf } from "@execmux/client";
import { AsciicastWriter } from "./asciicast.js";
import type { ConsoleApp } from "./console-app.js";
import { saveStream } from "./save-stream.js";
import type { TerminalTab } from "./terminal-tab.js";
import { transfers } from "./transfers.js";

/** Output per read: one reply stays well inside any message limit. */
const PAGE_BYTES = 1024 * 1024;

export type RetainedReader = (afterSeq: number, maxBytes: number) => Promise<ResultOf<"process/read">>;

/** Reads a process of the client's own session. */
export const ownProcessReader =
  (client: ExecmuxClient, processId: string): RetainedReader =>
  (afterSeq, maxBytes) =>
    client.read(processId, { afterSeq, maxBytes, timestamps: true });

/** The cast, produced page by page as it is pulled. `onBytes` counts the output read so far. */
export function recordingStream(read: RetainedReader, writer: AsciicastWriter, onBytes: (bytes: number) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let afterSeq = 0;
  let lastMs = 0;
  let outputBytes = 0;
  let headerSent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const page = await read(afterSeq, PAGE_BYTES);
      let text = "";
      for (const chunk of page.chunks) {
        const bytes = decodeBase64(chunk.chunk);
        lastMs = chunk.timeMs ?? lastMs;
        text += writer.output(lastMs, chunk.stream, bytes);
        outputBytes += bytes.length;
        afterSeq = chunk.seq;
      }
      // The header goes first, but after the first page: it names when the output began.
      if (!headerSent) {
        text = writer.headerLine() + text;
        headerSent = true;
      }
      onBytes(outputBytes);
      if (page.chunks.length === 0) {
        text += writer.end(lastMs);
        if (text) controller.enqueue(encoder.encode(text));
        controller.close();
        return;
      }
      if (text) controller.enqueue(encoder.encode(text));
    },
  });
}

/** A file name from a title: its first words, in letters, digits, dots and dashes. */
function castName(title: string): string {
  const words = title.split(/\s+/).slice(0, 3).join("-");
  return words.replace(/[^\w.-]+/g, "-").replace(/-{2,}/g, "-").replace(/^-+|-+$/g, "").slice(0, 40) || "recording";
}

export async function downloadRecording(app: ConsoleApp, tab: TerminalTab, read?: RetainedReader): Promise<void> {
  const processId = tab.source.processId;
  const name = `${castName(tab.title)}-${processId}.cast`;
  const item = transfers().add("download", name, undefined, `recording of ${tab.title}`);
  const writer = new AsciicastWriter({ width: tab.terminal.cols, height: tab.terminal.rows, title: tab.title, env: { TERM: "xterm-256color" } });
  const source = read ?? tab.source.readRetained ?? ownProcessReader(app.client, processId);
  try {
    await saveStream({ name, mediaType: "application/x-asciicast", stream: recordingStream(source, writer, (bytes) => item.progress(bytes)) });
    item.done(`recording saved`);
  } catch (error) {
    item.fail((error as Error).message);
  }
}
