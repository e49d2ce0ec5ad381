/**
 * A whole response body in memory, for a request without streamResponse.
 * The cap is what bounds one body: a body is hostile until proven small, so
 * a declared length over it fails before a byte is read, and an undeclared
 * one fails the moment it passes it. What many bodies hold together is
 * bounded by `reserve`, awaited before the first byte is read with the most
 * the body can be (its declared length, else the cap).
 */
import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { BODY_READ_ERROR, bodyReadFailed } from "./errors.js";

export async function readBufferedBody(
  response: IncomingMessage,
  body: Readable,
  limitBytes: number,
  reserve: (mostBytes: number) => Promise<void> = async () => undefined,
): Promise<Buffer> {
  const tooLarge = () =>
    bodyReadFailed(
      `the body is larger than the ${limitBytes} bytes a buffered http/request may hold (--max-http-body-bytes); ask for streamResponse`,
    );
  const declared = Number(response.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limitBytes) {
    body.destroy();
    throw tooLarge();
  }
  try {
    await reserve(Number.isFinite(declared) && declared >= 0 ? declared : limitBytes);
  } catch (error) {
    body.destroy();
    throw error;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      // Leaving the loop destroys the stream, which closes the connection.
      if (size > limitBytes) break;
      chunks.push(chunk);
    }
  } catch {
    // Cut off, reset, timed out or aborted: reqwest reports them all alike.
    throw bodyReadFailed(BODY_READ_ERROR);
  }
  if (size > limitBytes) throw tooLarge();
  return Buffer.concat(chunks, size);
}
