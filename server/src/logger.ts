/**
 * The daemon's logger: JSON lines (or colored text with --log-pretty) on
 * stderr, never stdout, which belongs to the URL line (WebSocket mode) or
 * to the protocol itself (stdio mode).
 */
import type { FastifyBaseLogger, FastifyRequest } from "fastify";
import { pino } from "pino";
import { redactedUrl } from "./auth/request-auth.js";
import type { Config } from "./config.js";

type LogSettings = Pick<Config, "logLevel" | "logPretty">;

/** Fastify's `logger` option. */
export function loggerOptions(config: LogSettings) {
  return {
    level: config.logLevel,
    ...(config.logPretty
      ? { transport: { target: "pino-pretty", options: { destination: 2, colorize: true } } }
      : { stream: process.stderr }),
    // A token may travel in the query string: logs never show one.
    serializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: redactedUrl(request.url), remoteAddress: request.ip }),
    },
  };
}

/** The same logger without Fastify (stdio mode has no HTTP server). */
export function createLogger(config: LogSettings): FastifyBaseLogger {
  const { stream, ...options } = loggerOptions(config) as ReturnType<typeof loggerOptions> & { stream?: NodeJS.WritableStream };
  return (stream ? pino(options, stream) : pino(options)) as FastifyBaseLogger;
}
