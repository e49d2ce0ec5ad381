/**
 * The web console's static files (built by scripts/build-browser.mjs into
 * server/console-dist), served by the daemon itself at /console. They hold
 * no secret, so they need no token; the WebSocket they open does. Read on
 * the first request for one: a daemon nobody opens the console of never
 * holds them.
 *
 * Every answer carries a Content-Security-Policy: no page may frame the
 * console (`frame-ancestors 'none'`, and X-Frame-Options for browsers that
 * predate it), so a tokenless daemon's console cannot be clickjacked; scripts
 * come only from the daemon, and the page talks only to its own origin.
 * Styles may be inline: the page has a style block and xterm.js writes
 * <style> elements as it renders, and a style cannot run code.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname } from "node:path";
import { inPackage } from "./package-root.js";

const DIRECTORY = `${inPackage("console-dist")}/`;
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
};

export const CONSOLE_PREFIX = "/console";

export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  // 'self' covers the page's own ws:// and wss:// origin.
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** The headers every console answer carries. */
const SECURITY_HEADERS = {
  "content-security-policy": CONSOLE_CONTENT_SECURITY_POLICY,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
} as const;

let files: Map<string, Buffer> | undefined;

/** The console's files by name; empty when they were not built. No path from a request ever reaches the file system. */
function consoleFiles(): Map<string, Buffer> {
  return (files ??= existsSync(DIRECTORY) ? new Map(readdirSync(DIRECTORY).map((name) => [name, readFileSync(`${DIRECTORY}${name}`)])) : new Map());
}

/** Whether the request accepts gzip (every browser does). */
const acceptsGzip = (request: IncomingMessage) => /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""));

/**
 * Answers a GET for the console at `prefix` (CONSOLE_PREFIX under the
 * daemon's --base-path); false when `path` is none of its files.
 */
export function serveConsole(prefix: string, path: string, request: IncomingMessage, reply: ServerResponse): boolean {
  if (path === prefix) {
    // Relative, as the page's own links are: behind a proxy's path prefix the daemon does not know the page's full path.
    reply.writeHead(302, { ...SECURITY_HEADERS, location: `${prefix.slice(prefix.lastIndexOf("/") + 1)}/` }).end();
    return true;
  }
  if (!path.startsWith(`${prefix}/`)) return false;
  const name = path.slice(prefix.length + 1) || "index.html";
  if (name.endsWith(".gz")) return false;
  const all = consoleFiles();
  // The build compressed the text files (name.gz): sent as they are where the browser takes gzip.
  const compressed = acceptsGzip(request) ? all.get(`${name}.gz`) : undefined;
  const body = compressed ?? all.get(name);
  if (!body) return false;
  reply
    .writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": TYPES[extname(name)] ?? "application/octet-stream",
      "cache-control": "no-cache",
      vary: "accept-encoding",
      ...(compressed ? { "content-encoding": "gzip" } : {}),
      "content-length": body.length,
    })
    .end(body);
  return true;
}

/** `GET /` for a browser: where the console is (relative, as above). */
export const ROOT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>execmux</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#1d2330}a{color:#2f6feb}code{font-size:13px}</style></head>
<body><h1>execmux</h1>
<p>This is an execmux daemon. Programs talk to it over a WebSocket on this URL (JSON-RPC).</p>
<p><a href="console/">Open the web console</a></p>
</body></html>
`;
