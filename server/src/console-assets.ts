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
 *
 * Nothing is read at start-up: the folder is read on the first request for
 * the console, once, and kept (a daemon nobody opens the console on never
 * reads it).
 */
import { readdir, readFile } from "node:fs/promises";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

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

let files: Promise<Map<string, Buffer> | undefined> | undefined;

/** The built files by name; undefined when the console was not built. No path from a request reaches the file system. */
function consoleFiles(): Promise<Map<string, Buffer> | undefined> {
  return (files ??= (async () => {
    try {
      const names = await readdir(DIRECTORY);
      return new Map(await Promise.all(names.map(async (name) => [name, await readFile(`${DIRECTORY}${name}`)] as const)));
    } catch {
      return undefined;
    }
  })());
}

/** Whether the request accepts gzip (every browser does). */
const acceptsGzip = (request: FastifyRequest) => /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""));

async function send(name: string, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const all = await consoleFiles();
  reply.headers(SECURITY_HEADERS);
  if (!all) return reply.code(503).type("text/plain; charset=utf-8").send("the console was not built (run `npm run build`)\n");
  // The build compressed the text files (name.gz): sent as they are where the browser takes gzip.
  const compressed = acceptsGzip(request) ? all.get(`${name}.gz`) : undefined;
  const body = compressed ?? all.get(name);
  if (!body || name.endsWith(".gz")) return reply.code(404).send({ error: "not found" });
  reply.type(TYPES[extname(name)] ?? "application/octet-stream").header("cache-control", "no-cache").header("vary", "accept-encoding");
  if (compressed) reply.header("content-encoding", "gzip");
  return reply.send(body);
}

/** Serves the console at `prefix` (CONSOLE_PREFIX under the daemon's --base-path). */
export function registerConsole(app: FastifyInstance, prefix = CONSOLE_PREFIX): void {
  // Relative, as the page's own links are: behind a proxy's path prefix the daemon does not know the page's full path.
  const lastSegment = prefix.slice(prefix.lastIndexOf("/") + 1);
  app.get(prefix, async (_request, reply) => reply.headers(SECURITY_HEADERS).redirect(`${lastSegment}/`));
  app.get(`${prefix}/`, async (request, reply) => send("index.html", request, reply));
  app.get<{ Params: { name: string } }>(`${prefix}/:name`, async (request, reply) => send(request.params.name, request, reply));
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
