/**
 * Upstream's words for every way an http/request fails (its reqwest runner),
 * so a Codex client sees the same errors from either executor. The causes
 * Node gives (ECONNREFUSED, a TLS alert) are logged, not sent: upstream's
 * messages do not carry them either.
 */
import { internalError, invalidParams, type RpcError } from "../../errors/rpc-error.js";

/** What reqwest says when a response body stops early, times out or cannot be read. */
export const BODY_READ_ERROR = "error decoding response body";

export const invalidMethod = (): RpcError => invalidParams("http/request method is invalid: invalid HTTP method");
export const invalidUrl = (reason: string): RpcError => invalidParams(`http/request url is invalid: ${reason}`);
export const unsupportedScheme = (scheme: string): RpcError =>
  invalidParams(`http/request only supports http and https URLs, got ${scheme}`);
export const invalidHeaderName = (): RpcError => invalidParams("http/request header name is invalid: invalid HTTP header name");
export const invalidHeaderValue = (name: string): RpcError =>
  invalidParams(`http/request header value is invalid for ${name}: failed to parse header value`);
export const streamIdActive = (requestId: string): RpcError =>
  invalidParams(`http/request streamResponse requestId \`${requestId}\` is already active`);
/** Not upstream's: execmux reports `httpHeaderEnvVars: false`, so a client that sends one anyway is told why it is refused. */
/** Sending failed or the timeout passed before the response head. */
export const requestFailed = (detail: string): RpcError => internalError(`http/request failed: ${detail}`);
/** reqwest's text for a failed send (refused, DNS, TLS, proxy, timeout): the URL without credentials. */
export const sendFailed = (url: URL): RpcError => requestFailed(`error sending request for url (${url.href})`);
export const bodyReadFailed = (detail: string): RpcError => internalError(`failed to read http/request response body: ${detail}`);
