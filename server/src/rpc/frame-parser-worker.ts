/**
 * The worker thread of off-thread-frames.ts: takes a large frame's bytes,
 * answers with the message they hold and its params checked (frame-check.ts).
 */
import { parentPort } from "node:worker_threads";
import { checkFrame } from "./frame-check.js";

parentPort?.on("message", ({ id, bytes }: { id: number; bytes: Uint8Array }) => {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  void checkFrame(text).then((frame) => parentPort!.postMessage({ id, frame }));
});
