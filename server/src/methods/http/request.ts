/**
 * http/request: one HTTP exchange made by the executor. Buffered, the reply
 * carries the whole body (up to --max-http-body-bytes); streamed, the reply
 * carries status and headers and the body follows as notifications.
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { base64Length } from "../reply-size.js";
import { connectionClosed } from "../../errors/rpc-error.js";
import { streamBody } from "./body-stream.js";
import { readBufferedBody } from "./buffered-body.js";
import { BODY_READ_ERROR, bodyReadFailed, requestFailed } from "./errors.js";
import { HTTP_REQUESTS, HttpRequests, type HttpCall } from "./http-requests.js";
import { outgoingRequest } from "./outgoing-request.js";
import { sendFollowingRedirects } from "./redirects.js";
import { responseHeaders } from "./response-headers.js";

export async function httpRequest(params: ParamsOf<"http/request">, context: SessionContext): Promise<ResultOf<"http/request">> {
  const { config, log } = context.connection.deps;
  const { connection } = context;
  const requests = context.resources.get(
    HTTP_REQUESTS,
    () => new HttpRequests(config.maxHttpRequests, () => connection.deps.budgets.descriptors.take(connection.client, "http request")),
  );
  const streamed = params.streamResponse === true;
  const call = requests.begin(params.requestId, streamed, params.timeoutMs ?? undefined);
  let streaming = false;
  try {
    const request = outgoingRequest(params, process.env);
    // Upstream's outer deadline fires before anything is sent; its words, not a send error's.
    if (params.timeoutMs === 0) throw requestFailed("route-aware request timed out");
    const exchange = await sendFollowingRedirects(request, {
      policy: params.redirectPolicy ?? "follow",
      signal: call.signal,
      // Read per request, as reqwest builds its client per request: a changed proxy applies at once.
      env: process.env,
      onSendError: (url, error) => log.debug({ err: error, origin: url.origin }, "http/request could not be sent"),
    });
    const head = { status: exchange.response.statusCode ?? 0, headers: responseHeaders(exchange.response.rawHeaders) };
    if (!streamed) {
      const body = await readBufferedBody(exchange.response, exchange.body, config.maxHttpBodyBytes, (mostBytes) => holdRoomFor(mostBytes, context, call));
      return { ...head, bodyBase64: body.toString("base64") };
    }
    streaming = true;
    // The first delta must follow the reply on the wire. Should the reply never be
    // sent, the call (and its server connection) lives until the connection closes.
    context.afterReply(() => {
      void streamBody(exchange.body, call, (delta) =>
        requests.takeTurn(
          () => context.whenWritable(),
          () => context.notify("http/request/bodyDelta", delta),
        ),
      );
    });
    return { ...head, bodyBase64: "" };
  } finally {
    if (!streaming) call.end();
  }
}

/** Above the body's base64: the reply's envelope, status and headers (headers are capped well below this by Node's parser). */
const REPLY_OVERHEAD_BYTES = 64 * 1024;

/**
 * Before a buffered body is read: room for its reply on the connection (a
 * client that takes no replies gets them one at a time, as fs/readFile's),
 * and its bytes in the daemon's budget for buffered bodies, charged to the
 * client (budgets/), held until the reply has been written to the socket.
 */
async function holdRoomFor(mostBytes: number, context: SessionContext, call: HttpCall): Promise<void> {
  // Past timeoutMs while waiting: reqwest's words for a body that timed out.
  const gaveUp = () => (call.abortCause === "timeout" ? bodyReadFailed(BODY_READ_ERROR) : connectionClosed());
  const replyBytes = base64Length(mostBytes) + REPLY_OVERHEAD_BYTES;
  await Promise.race([context.whenReplyRoom(replyBytes), aborted(call.signal)]);
  if (call.signal.aborted) throw gaveUp();
  context.reserveReply(replyBytes);
  const { connection } = context;
  try {
    context.holdUntilSent(await connection.deps.budgets.httpBodies.reserve(connection.client, mostBytes, call.signal));
  } catch {
    throw gaveUp();
  }
}

/** Resolves when `signal` aborts (never otherwise; the listener goes with the signal). */
const aborted = (signal: AbortSignal) => new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
