/**
 * The daemon's logger: JSON lines (or colored text with --log-pretty) on
 * stderr, never stdout, which belongs to the URL line (WebSocket mode) or
 * to the protocol itself (stdio mode).
 *
 * Every line goes through the token redactor just before it is written,
 * repeated lines are rate-limited, and the serializers never carry a token
 * (the request URL without its query, errors without the raw HTTP bytes Node
 * attaches to a malformed request, which hold its headers).
 */
import type { IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import { pino, type Logger as PinoLogger } from "pino";
import { redactedUrl } from "./auth/request-auth.js";
import type { Config } from "./config.js";
import { redactSecrets } from "./log/redact.js";
import { RepeatLimiter } from "./log/repeat-limiter.js";

type LogSettings = Pick<Config, "logLevel" | "logPretty">;

/** The daemon's logger (pino's). */
export type Logger = PinoLogger;

/** Name, message, code and stack of an error; nothing else it carries (Node puts `rawPacket` on client errors). */
function serializeError(error: Error): { type: string; message: string; stack: string; [key: string]: unknown } {
  const code = (error as { code?: unknown }).code;
  return { type: error.constructor?.name ?? "Error", message: String(error.message), ...(code !== undefined ? { code } : {}), stack: String(error.stack) };
}

/** pino's options. `tokenForms`: the accepted tokens in every form a log line could hold, masked. */
function loggerOptions(config: LogSettings, tokenForms: () => readonly string[] = () => []) {
  return {
    level: config.logLevel,
    // pino-pretty in this thread (not as a transport, whose worker a bundle cannot carry), loaded only when asked for.
    stream: config.logPretty
      ? (createRequire(import.meta.url)("pino-pretty") as (options: object) => NodeJS.WritableStream)({ destination: 2, colorize: true, sync: true })
      : process.stderr,
    // A token may travel in the query string: logs never show one.
    serializers: {
      req: (request: IncomingMessage) => ({ method: request.method, url: redactedUrl(request.url ?? ""), remoteAddress: request.socket?.remoteAddress }),
      err: serializeError,
    },
    hooks: {
      ...new RepeatLimiter().hooks(),
      streamWrite: (line: string) => redactSecrets(line, tokenForms()),
    },
  };
}

/** The logger. A `destination` takes the JSON lines instead of stderr. */
export function createLogger(config: LogSettings, tokenForms?: () => readonly string[], destination?: { write(line: string): void }): Logger {
  const { stream, ...options } = loggerOptions(destination ? { ...config, logPretty: false } : config, tokenForms) as ReturnType<typeof loggerOptions> & {
    stream?: NodeJS.WritableStream;
  };
  const out = destination ?? stream;
  return out ? pino(options, out as NodeJS.WritableStream) : pino(options);
}
