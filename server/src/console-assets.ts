/**
 * The web console's static files (built by scripts/build-browser.mjs into
 * server/console-dist), served by the daemon itself at /console. They hold
 * no secret, so they need no token; the WebSocket they open does.
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

/** Serves the console at `prefix` (CONSOLE_PREFIX under the daemon's --base-path). */
export function registerConsole(app: FastifyInstance, prefix = CONSOLE_PREFIX): void {
  if (!existsSync(DIRECTORY)) {
    app.log.warn("console assets are missing (run `npm run build`); /console is disabled");
    return;
  }
  // Read once: a handful of files, and no path from a request ever reaches the file system.
  const files = new Map(readdirSync(DIRECTORY).map((name) => [name, readFileSync(`${DIRECTORY}${name}`)]));
  const send = (name: string) => async (_request: unknown, reply: import("fastify").FastifyReply) =>
    reply.type(TYPES[extname(name)] ?? "application/octet-stream").header("cache-control", "no-cache").send(files.get(name));
  // Relative, as the page's own links are: behind a proxy's path prefix the daemon does not know the page's full path.
  const lastSegment = prefix.slice(prefix.lastIndexOf("/") + 1);
  app.get(prefix, async (_request, reply) => reply.redirect(`${lastSegment}/`));
  app.get(`${prefix}/`, send("index.html"));
  for (const name of files.keys()) app.get(`${prefix}/${name}`, send(name));
}
