/**
 * The last line of defence between a token and a log: every log line is
 * passed through here just before it is written, whatever logged it
 * (execmux, node:http, ws, an error's message). Tokens are
 * masked by where they travel (a `token` query parameter, a Bearer
 * credential, the `execmux.bearer.` subprotocol), which also covers wrong
 * guesses, and by value (every configured token, in each encoding it can
 * take on the way in).
 */

const MASK = "[redacted]";

/** `?token=…` / `&token=…`, also with the name percent-encoded (`%74oken`), as URLSearchParams decodes it. */
const QUERY_PARAMETER = /([?&;])([^=&\s"'#?]+)=([^&\s"'#;]*)/g;
/** Not the word itself: upstream's refusals read "missing websocket bearer token" (credential.ts). */
const BEARER = /(bearer\s+)(?!token(?:[\s",;}\]]|$))[^\s",;}\]]+/gi;
const SUBPROTOCOL = /(execmux\.bearer\.)[^\s",;}\]]+/gi;

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/** The forms a token can take in a log line: as sent, URL-encoded, base64url (subprotocol), JSON-escaped. */
export function tokenForms(token: string): string[] {
  const forms = new Set([token, encodeURIComponent(token), Buffer.from(token).toString("base64url"), JSON.stringify(token).slice(1, -1)]);
  return [...forms].filter((form) => form !== "");
}

export function redactSecrets(line: string, knownForms: readonly string[]): string {
  let redacted = line
    .replace(QUERY_PARAMETER, (whole, separator: string, name: string) =>
      decodedName(name) === "token" ? `${separator}${name}=${MASK}` : whole,
    )
    .replace(BEARER, `$1${MASK}`)
    .replace(SUBPROTOCOL, `$1${MASK}`);
  for (const form of knownForms) if (redacted.includes(form)) redacted = redacted.replaceAll(form, MASK);
  return redacted;
}
