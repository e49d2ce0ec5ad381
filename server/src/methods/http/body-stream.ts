/**
 * streamResponse: the body as `http/request/bodyDelta` notifications, sent
 * after the reply. Seqs run from 1 without holes; each delta holds at most
 * 1 MiB (upstream's MAX_HTTP_BODY_DELTA_BYTES); the last frame is `done`
 * with an empty delta and `error` set when the body broke off. The body is
 * only read while the socket to the client has room: a client that stops
 * reading stops the read, and TCP stops the server, so past the socket's
 * high-water mark the daemon holds one delta (and each stream a read
 * buffer's worth), whatever the bodies' sizes.
 */
import type { Readable } from "node:stream";
import { MAX_HTTP_BODY_DELTA_BYTES } from "@execmux/shared/core";
import type { HttpRequestBodyDelta } from "@execmux/shared";
import { BODY_READ_ERROR } from "./errors.js";
import type { HttpCall } from "./http-requests.js";

/** Sends one notification when it is this stream's turn and the socket has room. */
export type PacedSend = (delta: HttpRequestBodyDelta) => Promise<void>;

export async function streamBody(body: Readable, call: HttpCall, send: PacedSend): Promise<void> {
  const { requestId } = call;
  let seq = 1;
  let error: string | null = null;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      for (let offset = 0; offset < chunk.length; offset += MAX_HTTP_BODY_DELTA_BYTES) {
        const delta = chunk.subarray(offset, offset + MAX_HTTP_BODY_DELTA_BYTES);
        await send({ requestId, seq: seq++, deltaBase64: delta.toString("base64"), done: false, error: null });
        // Leaving the loop destroys the body, which closes the connection to the server.
        if (call.abortCause === "closed") return;
      }
    }
  } catch {
    // Cut off, reset, or past timeoutMs: reqwest words them all alike.
    error = BODY_READ_ERROR;
  } finally {
    if (call.abortCause !== "closed") {
      await send({ requestId, seq, deltaBase64: "", done: true, error }).catch(() => undefined);
    }
    call.end();
  }
}
