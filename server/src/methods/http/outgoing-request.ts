/**
 * From http/request params to the request to send, checked in upstream's
 * order (method, URL, scheme, headers) with upstream's messages. Checking
 * here, before any socket, means Node's own validation never throws later.
 */
import type { HttpRequestParams } from "@execmux/shared";
import {
  invalidHeaderName,
  invalidHeaderValue,
  invalidMethod,
  invalidUrl,
  unsupportedScheme,
} from "./errors.js";
import { invalidParams } from "../../errors/rpc-error.js";
import { decodeStandardBase64 } from "../fs/base64.js";
import { headerEnvValue } from "./header-env.js";
import { urlErrorReason } from "./url-error.js";

/** A header line as it goes on the wire: lowercase name, value as a latin1 string of its UTF-8 bytes. */
export type WireHeader = readonly [name: string, value: string];

export interface OutgoingRequest {
  readonly method: string;
  readonly url: URL;
  /** The client's headers in the client's order, repeats kept. */
  readonly headers: readonly WireHeader[];
  readonly body: Buffer | undefined;
}

/** RFC 9110 token: what the http crate accepts as a method or header name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What the http crate's HeaderValue::from_str refuses: controls other than tab, and DEL. */
const INVALID_VALUE_CHAR = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** `env`: the executor's environment, which `valueEnvVar` headers read (header-env.ts). */
export function outgoingRequest(params: HttpRequestParams, env: NodeJS.ProcessEnv): OutgoingRequest {
  // Upstream decodes bodyBase64 while deserializing the params (before any
  // other check), strictly, and answers -32602 with the base64 crate's
  // DecodeError text alone ("Invalid symbol 33, offset 0."). Node's decoder
  // would skip what it does not understand and send a body the client never
  // meant; the fs/writeFile decoder refuses exactly what the crate refuses.
  const decoded = params.bodyBase64 ? decodeStandardBase64(params.bodyBase64) : undefined;
  if (decoded && "error" in decoded) throw invalidParams(decoded.error);
  if (!TOKEN.test(params.method)) throw invalidMethod();
  const url = parseHttpUrl(params.url);
  const headers = (params.headers ?? []).map((header): WireHeader => {
    if (!TOKEN.test(header.name)) throw invalidHeaderName();
    // The variable's value is appended first, and the whole value checked: a newline in it is refused too.
    const value = header.valueEnvVar == null ? header.value : header.value + headerEnvValue(header.name, header.valueEnvVar, env);
    if (INVALID_VALUE_CHAR.test(value)) throw invalidHeaderValue(header.name);
    // Node writes header strings as latin1: non-ASCII text goes out as its UTF-8 bytes, as reqwest sends it.
    return [header.name.toLowerCase(), Buffer.from(value, "utf8").toString("latin1")];
  });
  const body = decoded?.bytes;
  return { method: params.method, url, headers, body };
}

/** An absolute http or https URL, or upstream's -32602 for what it is not. */
export function parseHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidUrl(urlErrorReason(text));
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw unsupportedScheme(url.protocol.slice(0, -1));
  return url;
}
