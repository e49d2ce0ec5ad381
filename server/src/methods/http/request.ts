/**
 * http/request: one HTTP exchange made by the executor. Buffered, the reply
 * carries the whole body (up to --max-http-body-bytes); streamed, the reply
 * carries status and headers and the body follows as notifications.
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { streamBody } from "./body-stream.js";
import { readBufferedBody } from "./buffered-body.js";
import { requestFailed } from "./errors.js";
import { HTTP_REQUESTS, HttpRequests } from "./http-requests.js";
import { outgoingRequest } from "./outgoing-request.js";
import { sendFollowingRedirects } from "./redirects.js";
import { responseHeaders } from "./response-headers.js";

export async function httpRequest(params: ParamsOf<"http/request">, context: SessionContext): Promise<ResultOf<"http/request">> {
  const { config, log } = context.connection.deps;
  const requests = context.resources.get(HTTP_REQUESTS, () => new HttpRequests(config.maxHttpRequests));
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
      return { ...head, bodyBase64: (await readBufferedBody(exchange.response, exchange.body, config.maxHttpBodyBytes)).toString("base64") };
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
