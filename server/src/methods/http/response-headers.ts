import type { HttpResponseHeader } from "@execmux/shared";

/**
 * What upstream keeps of a value: reqwest's `to_str()` accepts visible ASCII
 * and tab only, so a UTF-8 value is dropped along with invalid bytes. Node
 * hands values over as latin1, one char per byte, so the test is per char.
 */
const VISIBLE_ASCII = /^[\t\u0020-\u007e]*$/;

/** Node's raw header list (name, value, name, value...) as the result's headers: lowercase names, wire order. */
export function responseHeaders(rawHeaders: readonly string[]): HttpResponseHeader[] {
  const headers: HttpResponseHeader[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const value = rawHeaders[index + 1]!;
    if (VISIBLE_ASCII.test(value)) headers.push({ name: rawHeaders[index]!.toLowerCase(), value });
  }
  return headers;
}
