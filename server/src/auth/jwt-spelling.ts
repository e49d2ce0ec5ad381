/**
 * The one spelling a JWT may have: three segments of unpadded base64url,
 * each exactly as its bytes encode. jose decodes with `atob`, which also
 * takes `=` padding, ASCII whitespace and a last character whose unused bits
 * are not zero, so one signature could be sent in many spellings, and each
 * would have been a different token to anything that counted tokens as sent.
 * Upstream's decoder (Rust's base64, URL_SAFE_NO_PAD) refuses all of those.
 */
const SEGMENT = /^[A-Za-z0-9_-]*$/;

/** True when every segment is base64url as an encoder writes it: no padding, no whitespace, unused bits zero. */
export function isCanonicalJws(token: string): boolean {
  const segments = token.split(".");
  if (segments.length !== 3) return false;
  return segments.every((segment) => SEGMENT.test(segment) && Buffer.from(segment, "base64url").toString("base64url") === segment);
}
