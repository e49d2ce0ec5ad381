/**
 * The web console's static files (built by scripts/build-browser.mjs into
 * server/console-dist), served by the daemon itself at /console. They hold
 * no secret, so they need no token; the WebSocket they open does.
 *
 * Every answer carries a Content-Security-Policy: no page may frame the
 * console (`frame-ancestors 'none'`, and X-Frame-Options for browsers that
 * predate it), so a tokenless daemon's console cannot be clickjacked; scripts
 * come only from the daemon, and the page talks only to its own origin.
 * Styles may be inline: the page has a style block and xterm.js writes
 * <style> elements as it renders, and a style cannot run code.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";

const DIRECTORY = fileURLToPath(new URL("../console-dist/", import.meta.url));
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

/** Serves the console at `prefix` (CONSOLE_PREFIX under the daemon's --base-path). */
export function registerConsole(app: FastifyInstance, prefix = CONSOLE_PREFIX): void {
  if (!existsSync(DIRECTORY)) {
    app.log.warn("console assets are missing (run `npm run build`); /console is disabled");
    return;
  }
  // Read once: a handful of files, and no path from a request ever reaches the file system.
  const files = new Map(readdirSync(DIRECTORY).map((name) => [name, readFileSync(`${DIRECTORY}${name}`)]));
  const send = (name: string) => async (_request: unknown, reply: import("fastify").FastifyReply) =>
    reply.type(TYPES[extname(name)] ?? "application/octet-stream").header("cache-control", "no-cache").headers(SECURITY_HEADERS).send(files.get(name));
  // Relative, as the page's own links are: behind a proxy's path prefix the daemon does not know the page's full path.
  const lastSegment = prefix.slice(prefix.lastIndexOf("/") + 1);
  app.get(prefix, async (_request, reply) => reply.headers(SECURITY_HEADERS).redirect(`${lastSegment}/`));
  app.get(`${prefix}/`, send("index.html"));
  for (const name of files.keys()) app.get(`${prefix}/${name}`, send(name));
}
