/**
 * Whether a credential-shaped match inside an environment value is part of
 * a path or a host name (a directory named like a token, a host in a URL)
 * rather than a credential: upstream 0.171 never discovers one there. The
 * value is cut at whitespace, quotes, backquotes and `=`; a URL is
 * operational only in its host and port, anything else when it is a path
 * (a root, more than one component, or a backslash) that holds the match.
 */
const BOUNDARY = /[\s"'=`]/;

/**
 * How far either side of a match its path or URL is looked for: a word longer than a credential may be is
 * not a path holding one (and looking further would cost each match the whole value).
 */
const MAX_SURROUNDING = 4096;

export function isOperationalPathMatch(text: string, start: number, end: number): boolean {
  let from = start;
  while (from > 0 && !BOUNDARY.test(text[from - 1]!)) if (start - --from > MAX_SURROUNDING) return false;
  let to = end;
  while (to < text.length && !BOUNDARY.test(text[to]!)) if (++to - end > MAX_SURROUNDING) return false;
  const token = text.slice(from, to);
  const relativeStart = start - from;
  const relativeEnd = end - from;
  const url = hostOf(token);
  if (url) return relativeStart >= url.beforeHost && relativeEnd <= url.afterPort;
  const slash = /[/\\]/;
  if (!slash.test(token.slice(0, relativeStart)) && !slash.test(token.slice(relativeEnd))) return false;
  const components = token.split("/").filter((component) => component !== "" && component !== ".");
  return token.startsWith("/") || components.length > 1 || token.includes("\\");
}

/** Where a URL's host and port sit in `token`, when it is a URL with a host. */
function hostOf(token: string): { beforeHost: number; afterPort: number } | undefined {
  let url: URL;
  try {
    url = new URL(token);
  } catch {
    return undefined;
  }
  if (url.host === "") return undefined;
  const userinfo = url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ""}@` : "";
  const beforeHost = `${url.protocol}//${userinfo}`.length;
  return { beforeHost, afterPort: beforeHost + url.host.length };
}
