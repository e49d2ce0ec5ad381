/**
 * Paths on the wire are `file:` URIs, as upstream's PathUri
 * (codex-rs/utils/path-uri): `file:///abs/path`, percent-encoded the way
 * Rust's url crate encodes a file path. Parsing keeps upstream's rules and
 * messages; as a leniency (upstream's older PathUri did the same) a native
 * absolute POSIX path is accepted too. Pure: no Node or DOM APIs, so the
 * SDK builds URIs with the same code the daemon parses them with.
 */

// The two WHATWG globals used here exist in Node and browsers alike; declared
// narrowly instead of pulling in the DOM or Node type libraries.
declare class TextEncoder {
  encode(text: string): Uint8Array;
}
declare class URL {
  constructor(url: string);
  readonly protocol: string;
  readonly username: string;
  readonly password: string;
  readonly hostname: string;
  readonly port: string;
  readonly pathname: string;
  readonly search: string;
  readonly hash: string;
}

/** Bytes the url crate percent-encodes in a file path segment (besides controls and non-ASCII). */
const ENCODED_ASCII = new Set([" ", '"', "#", "<", ">", "?", "`", "{", "}", "%"]);

/** `/home/u/my proj` -> `file:///home/u/my%20proj`. */
export function pathToFileUri(path: string): string {
  // Most paths need no encoding: one string, not a chain of one-character
  // pieces. Such a chain costs nothing here and a lot later: the first
  // JSON.stringify of a 50,000-entry fs/walk reply spent 200 ms (the daemon's
  // event loop, whole) flattening them, against 14 ms for flat strings.
  if (!NEEDS_ENCODING.test(path)) return `file://${path}`;
  const pieces: string[] = [];
  for (const byte of new TextEncoder().encode(path)) {
    const char = String.fromCharCode(byte);
    pieces.push(byte < 0x20 || byte >= 0x7f || ENCODED_ASCII.has(char) ? `%${byte.toString(16).toUpperCase().padStart(2, "0")}` : char);
  }
  return `file://${pieces.join("")}`;
}

/** A character that pathToFileUri encodes: a control, non-ASCII, or one of ENCODED_ASCII. */
const NEEDS_ENCODING = /[^\x20-\x7e]|[ "#<>?`{}%]/;

export type PathUriResult = { readonly path: string } | { readonly error: string };

/**
 * A PathUri (or native absolute path) as a POSIX path on this host, or
 * upstream's reason it is not one. `..` segments are resolved lexically, as
 * URL parsing does.
 */
export function fileUriToPath(uri: string): PathUriResult {
  if (uri.startsWith("/")) return uri.includes("\u0000") ? { error: `'${uri}' is invalid on 'linux'` } : { path: uri };
  // Credentials or a port in a file URI: the url crate reads the authority as
  // a host and fails on it, and upstream passes its words on.
  const authority = /^file:\/\/([^/?#]*)/i.exec(uri)?.[1];
  if (authority?.includes("@") || (authority && /:\d*$/.test(authority))) return { error: "invalid URI: invalid international domain name" };
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return { error: "invalid URI: relative URL without a base" };
  }
  if (url.protocol !== "file:") return { error: `unsupported path URI scheme \`${url.protocol.slice(0, -1)}\`` };
  if (url.username !== "" || url.password !== "") return { error: "credentials are not allowed in path URIs" };
  if (url.port !== "") return { error: "ports are not allowed in path URIs" };
  if (url.search !== "") return { error: "query parameters are not allowed in path URIs" };
  if (url.hash !== "") return { error: "fragments are not allowed in path URIs" };
  // An authority other than localhost names a UNC share: a Windows path.
  if (url.hostname !== "" && url.hostname !== "localhost") return { error: `'${uri}' is invalid on 'linux'` };
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return { error: `'${uri}' is invalid on 'linux'` };
  }
  // A drive letter (`/C:/x`) is a Windows path; a NUL cannot be a POSIX path.
  if (/^\/[A-Za-z]:(\/|$)/.test(path) || path.includes("\u0000")) return { error: `'${uri}' is invalid on 'linux'` };
  return { path };
}
