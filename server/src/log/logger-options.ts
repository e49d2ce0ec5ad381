/**
 * The daemon's pino options: JSON lines (or pretty ones) on stderr, every
 * line through the token redactor just before it is written, repeated lines
 * rate-limited, and serializers that never carry a token (the request URL
 * without its query, errors without the raw HTTP bytes Node attaches to a
 * malformed request, which hold its headers).
 */
import type { FastifyRequest } from "fastify";
import { redactedUrl } from "../auth/request-auth.js";
import { redactSecrets } from "./redact.js";
import { RepeatLimiter } from "./repeat-limiter.js";

export interface LogSettings {
  readonly logLevel: string;
  readonly logPretty: boolean;
}

/** Name, message, code and stack of an error; nothing else it carries (Node puts `rawPacket` on client errors). */
function serializeError(error: Error): { type: string; message: string; stack: string; [key: string]: unknown } {
  const code = (error as { code?: unknown }).code;
  return { type: error.constructor?.name ?? "Error", message: String(error.message), ...(code !== undefined ? { code } : {}), stack: String(error.stack) };
}

export function loggerOptions(settings: LogSettings, tokenForms: () => readonly string[]) {
  return {
    level: settings.logLevel,
    ...(settings.logPretty
      ? { transport: { target: "pino-pretty", options: { destination: 2, colorize: true } } }
      : { stream: process.stderr }),
    serializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: redactedUrl(request.url), remoteAddress: request.ip }),
      err: serializeError,
    },
    hooks: {
      ...new RepeatLimiter().hooks(),
      streamWrite: (line: string) => redactSecrets(line, tokenForms()),
    },
  };
}
