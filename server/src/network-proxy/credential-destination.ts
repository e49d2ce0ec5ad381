/**
 * Where a custom credential provider's real value may go: one entry of its
 * `url_prefixes` (or the URL its `url_prefix_from_env` variable holds), read
 * as upstream 0.171 reads it. `https://api.example.com/v1` is a scheme, an
 * exact host (or `*.example.com`, its subdomains only), a port (443 or 80
 * when none is written) and a path prefix that ends at a segment boundary.
 * Without a scheme it is HTTPS, or HTTP for a loopback host; plain HTTP is
 * allowed for loopback hosts only. Failures throw upstream's words.
 */
import { isLoopbackHost } from "./address-class.js";
import { normalizeHost } from "./host-patterns.js";

export interface RequestTarget {
  readonly scheme: "http" | "https";
  /** Normalized (host-patterns.ts normalizeHost). */
  readonly host: string;
  readonly port: number;
  /** The request's path, as sent (no query). */
  readonly path: string;
}

export interface CredentialDestination {
  readonly scheme: "http" | "https";
  readonly host: string;
  readonly wildcard: boolean;
  readonly port: number;
  readonly pathPrefix: string;
}

const DEFAULT_PORT = { http: 80, https: 443 } as const;

export function parseDestination(input: string): CredentialDestination {
  const value = input.trim();
  const separator = value.indexOf("://");
  const explicitScheme = separator >= 0 ? value.slice(0, separator) : undefined;
  let authority = separator >= 0 ? value.slice(separator + 3) : value;
  const wildcard = authority.startsWith("*.");
  if (wildcard) authority = `wildcard.${authority.slice(2)}`;
  const url = parseUrl(`https://${authority}`);
  if (url.username || url.password || url.search || url.hash || /[?#]/.test(authority)) {
    throw new Error("credential destination cannot include user information, a query, or a fragment");
  }
  if (!url.hostname) throw new Error("credential destination has no hostname");
  let host = url.hostname;
  if (wildcard) {
    if (!host.startsWith("wildcard.")) throw new Error("credential destination has an invalid wildcard");
    host = host.slice("wildcard.".length);
  }
  host = normalizeHost(host);
  if (!host || host.includes("*") || host.includes("/")) throw new Error("credential destination must have an exact hostname or scoped wildcard");
  const loopback = !wildcard && isLoopbackHost(host);
  let scheme: "http" | "https";
  if (explicitScheme === undefined) scheme = loopback ? "http" : "https";
  else if (explicitScheme.toLowerCase() === "https") scheme = "https";
  else if (explicitScheme.toLowerCase() === "http" && loopback) scheme = "http";
  else throw new Error("credential destination must use HTTPS unless it targets loopback over HTTP");
  // Read again with its own scheme: HTTPS drops an explicit :443, which HTTP keeps (and the reverse for :80).
  const scoped = scheme === "http" ? parseUrl(`http://${authority}`) : url;
  return { scheme, host, wildcard, port: scoped.port ? Number(scoped.port) : DEFAULT_PORT[scheme], pathPrefix: scoped.pathname || "/" };
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new Error("credential destination is not a valid URL");
  }
}

export function matchesHost(destination: CredentialDestination, host: string, port: number): boolean {
  if (destination.port !== port) return false;
  return destination.wildcard ? host.endsWith(`.${destination.host}`) : host === destination.host;
}

/** Whether a request to `target` may carry the real value: scheme, host, port, then the path prefix at a segment boundary. */
export function matchesRequest(destination: CredentialDestination, target: RequestTarget): boolean {
  if (target.scheme !== destination.scheme || !matchesHost(destination, target.host, target.port)) return false;
  const { path } = target;
  if (!isSafeForAuthorization(path)) return false;
  const prefix = destination.pathPrefix;
  if (prefix === "/" || path === prefix) return true;
  return path.startsWith(prefix) && (prefix.endsWith("/") || path[prefix.length] === "/");
}

/**
 * A path a server might decode or normalize into another resource (a `.` or
 * `..` segment, spelled or percent-encoded; an encoded `/`, `\` or `%`; a
 * backslash; a bad escape) never gets a credential: the prefix it matched
 * may not be the resource the server serves.
 */
export function isSafeForAuthorization(path: string): boolean {
  return path.split("/").every(isSafeSegment);
}

function isSafeSegment(segment: string): boolean {
  let dots = 0;
  let other = false;
  for (let index = 0; index < segment.length; index++) {
    const character = segment[index]!;
    if (character === ".") dots++;
    else if (character === "\\") return false;
    else if (character === "%") {
      const hex = segment.slice(index + 1, index + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return false;
      const decoded = String.fromCharCode(parseInt(hex, 16));
      if (decoded === "%" || decoded === "/" || decoded === "\\") return false;
      if (decoded === ".") dots++;
      else other = true;
      index += 2;
    } else other = true;
  }
  return other || (dots !== 1 && dots !== 2);
}

/**
 * The path of an origin-form request target as a destination sees it: up to
 * the query. A `#` has no place in a request target; a server may read the
 * path past it, so a target holding one is matched as it stands, `#` and all,
 * and no prefix ends in one.
 */
export function requestPath(target: string): string {
  return target.split("?")[0]!;
}
