/**
 * "Unified exec", the tool shape agents call (Codex's exec_command and
 * write_stdin, seeds 000, 001, 003): run a command, wait a bounded time, get
 * the output so far plus "exited with code N" or "running as session N";
 * later type into that session and collect fresh output. Built on the
 * resumable client, so it works across reconnects.
 */
import type { ExecmuxClient } from "./client.js";
import { ExecmuxError } from "./errors.js";
import type { ProcessHandle } from "./process-handle.js";

/** Upstream's defaults and limits. */
export const DEFAULT_YIELD_TIME_MS = 1_000;
export const MAX_YIELD_TIME_MS = 60_000;
export const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;
/** Unread output kept per session between calls; the middle goes first past this. */
const PENDING_OUTPUT_CAP_BYTES = 1024 * 1024;

export interface ExecCommandParams {
  /** A shell command line. */
  cmd: string;
  yieldTimeMs?: number;
  maxOutputTokens?: number;
  /** Default /bin/bash. */
  shell?: string;
  /** Run the shell as a login shell (-lc). Default true. */
  login?: boolean;
  cwd?: string;
  env?: Record<string, string>;
  /** Run on a PTY (as upstream). Default true. */
  tty?: boolean;
}

export interface WriteStdinParams {
  sessionId: number;
  /** Characters to type; empty just polls for output. */
  chars: string;
  yieldTimeMs?: number;
  maxOutputTokens?: number;
}

export interface ExecCommandOutput {
  wallTimeMs: number;
  /** Set when the process has exited; the session is then forgotten. */
  exitCode?: number;
  /** Set while the process is still running. */
  sessionId?: number;
  /** Set when the output was truncated: the estimate (bytes / 4) of the whole. */
  originalTokenCount?: number;
  output: string;
}

/** Reusing a session that does not exist (or whose exit was already reported). */
export class UnknownSessionIdError extends ExecmuxError {
  override name = "UnknownSessionIdError";
  constructor(readonly sessionId: number) {
    super(`unknown session id ${sessionId}`);
  }
}

/** The text an LLM sees, exactly as seed 000's `to_text_output`. */
export function toTextOutput(result: ExecCommandOutput): string {
  const status =
    result.exitCode !== undefined ? `Process exited with code ${result.exitCode}` : `Process running with session ID ${result.sessionId}`;
  const truncation =
    result.originalTokenCount !== undefined ? `\nWarning: truncated output (original token count: ${result.originalTokenCount})` : "";
  return `Wall time: ${(result.wallTimeMs / 1000).toFixed(3)} seconds\n${status}${truncation}\nOutput:\n${result.output}`;
}

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/** Index of the UTF-8 character start at or before `index`. */
function charStartAtOrBefore(bytes: Uint8Array, index: number): number {
  let position = Math.min(index, bytes.length);
  while (position > 0 && isContinuation(bytes[position])) position--;
  return position;
}

/** Index of the UTF-8 character start at or after `index`. */
function charStartAtOrAfter(bytes: Uint8Array, index: number): number {
  let position = Math.max(0, index);
  while (position < bytes.length && isContinuation(bytes[position])) position++;
  return position;
}

const decode = (bytes: Uint8Array) => new TextDecoder("utf-8").decode(bytes);
const marker = (removedBytes: number) => `…${Math.ceil(removedBytes / 4)} tokens truncated…`;

/**
 * Keeps the head and the tail of `bytes` within `maxBytes` and replaces the
 * middle with a marker giving how much was cut (tokens ~ bytes / 4, as
 * upstream). Never splits a UTF-8 character.
 */
export function truncateMiddle(bytes: Uint8Array, maxBytes: number): { text: string; originalTokenCount?: number } {
  return truncateAround(bytes, 0, new Uint8Array(0), maxBytes);
}

/**
 * The same for output whose middle (`droppedBytes` of it) is already gone:
 * `head`, then what was dropped, then `tail`.
 */
function truncateAround(
  head: Uint8Array,
  droppedBytes: number,
  tail: Uint8Array,
  maxBytes: number,
): { text: string; originalTokenCount?: number } {
  const total = head.length + droppedBytes + tail.length;
  if (droppedBytes === 0 && total <= maxBytes) return { text: decode(head) + decode(tail) };
  if (droppedBytes === 0 && tail.length === 0) {
    // One buffer: split it in two halves around the cut.
    const headEnd = charStartAtOrBefore(head, Math.floor(maxBytes / 2));
    const tailStart = Math.max(headEnd, charStartAtOrAfter(head, head.length - (maxBytes - headEnd)));
    return {
      text: decode(head.subarray(0, headEnd)) + marker(tailStart - headEnd) + decode(head.subarray(tailStart)),
      originalTokenCount: Math.ceil(total / 4),
    };
  }
  const headEnd = charStartAtOrBefore(head, Math.min(head.length, Math.floor(maxBytes / 2)));
  const tailStart = charStartAtOrAfter(tail, tail.length - Math.min(tail.length, maxBytes - headEnd));
  const removed = total - headEnd - (tail.length - tailStart);
  return {
    text: decode(head.subarray(0, headEnd)) + marker(removed) + decode(tail.subarray(tailStart)),
    originalTokenCount: Math.ceil(total / 4),
  };
}

/** Output not yet returned to the agent, bounded: the middle is dropped (and counted) past the cap. */
class PendingOutput {
  private head: Uint8Array[] = [];
  private tail: Uint8Array[] = [];
  private headBytes = 0;
  private tailBytes = 0;
  private dropped = 0;

  push(data: Uint8Array): void {
    if (this.headBytes < PENDING_OUTPUT_CAP_BYTES / 2) {
      this.head.push(data);
      this.headBytes += data.length;
      return;
    }
    this.tail.push(data);
    this.tailBytes += data.length;
    while (this.tailBytes > PENDING_OUTPUT_CAP_BYTES / 2 && this.tail.length > 1) {
      const oldest = this.tail.shift()!;
      this.tailBytes -= oldest.length;
      this.dropped += oldest.length;
    }
  }

  /** Renders what is pending within `maxBytes` (middle cut, with a marker) and empties it. */
  take(maxBytes: number): { text: string; originalTokenCount?: number } {
    const join = (parts: Uint8Array[], length: number) => {
      const joined = new Uint8Array(length);
      let offset = 0;
      for (const part of parts) {
        joined.set(part, offset);
        offset += part.length;
      }
      return joined;
    };
    const result =
      this.dropped === 0
        ? truncateMiddle(join([...this.head, ...this.tail], this.headBytes + this.tailBytes), maxBytes)
        : truncateAround(join(this.head, this.headBytes), this.dropped, join(this.tail, this.tailBytes), maxBytes);
    this.head = [];
    this.tail = [];
    this.headBytes = this.tailBytes = this.dropped = 0;
    return result;
  }
}

interface UnifiedSession {
  readonly handle: ProcessHandle;
  readonly pending: PendingOutput;
  /** Wakes a waiting call when output arrives or the process closes. */
  wake: (() => void) | undefined;
}

export interface UnifiedExecOptions {
  /**
   * The first session id to hand out (default 0). An agent that replaces a
   * lost UnifiedExec with a new one starts past the old ids, so an old id
   * never names a new process.
   */
  firstSessionId?: number;
}

export class UnifiedExec {
  private nextSessionId: number;
  private readonly sessions = new Map<number, UnifiedSession>();

  constructor(
    private readonly client: ExecmuxClient,
    options: UnifiedExecOptions = {},
  ) {
    this.nextSessionId = options.firstSessionId ?? 0;
  }

  /** Sessions whose process is still running (or whose end was not reported yet). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Their ids. */
  get sessionIds(): number[] {
    return [...this.sessions.keys()];
  }

  /** The id the next execCommand will get. */
  get upcomingSessionId(): number {
    return this.nextSessionId;
  }

  async execCommand(params: ExecCommandParams): Promise<ExecCommandOutput> {
    const started = Date.now();
    const shell = params.shell ?? "/bin/bash";
    const handle = await this.client.start({
      argv: [shell, params.login === false ? "-c" : "-lc", params.cmd],
      tty: params.tty ?? true,
      ...(params.cwd !== undefined ? { cwd: params.cwd } : {}),
      ...(params.env !== undefined ? { env: params.env } : {}),
    });
    const sessionId = this.nextSessionId++;
    const session: UnifiedSession = { handle, pending: new PendingOutput(), wake: undefined };
    handle.onOutput((event) => {
      session.pending.push(event.data);
      session.wake?.();
    });
    handle.onClose(() => session.wake?.());
    this.sessions.set(sessionId, session);
    return this.collect(sessionId, session, started, params.yieldTimeMs, params.maxOutputTokens);
  }

  async writeStdin(params: WriteStdinParams): Promise<ExecCommandOutput> {
    const started = Date.now();
    const session = this.sessions.get(params.sessionId);
    if (!session) throw new UnknownSessionIdError(params.sessionId);
    if (params.chars !== "" && !session.handle.closed) await session.handle.write(params.chars);
    return this.collect(params.sessionId, session, started, params.yieldTimeMs, params.maxOutputTokens);
  }

  /** Ends every session's process (for an agent that is done). */
  async terminateAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.handle.terminate().catch(() => false)));
    this.sessions.clear();
  }

  /**
   * Waits until the process has closed or the yield time is up, then returns
   * everything that arrived since the last call. A closed process's session
   * is forgotten: using it again is "unknown session id".
   */
  private async collect(
    sessionId: number,
    session: UnifiedSession,
    started: number,
    requestedYieldMs: number | undefined,
    maxOutputTokens: number | undefined,
  ): Promise<ExecCommandOutput> {
    const requested = requestedYieldMs ?? DEFAULT_YIELD_TIME_MS;
    const yieldMs = Math.min(requested, MAX_YIELD_TIME_MS);
    const warning =
      requested > MAX_YIELD_TIME_MS
        ? `Warning: requested timeout ${requested}ms exceeds maximum of ${MAX_YIELD_TIME_MS}ms; clamping to ${MAX_YIELD_TIME_MS}ms.\n`
        : "";
    const deadline = started + yieldMs;
    while (!session.handle.closed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        session.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      session.wake = undefined;
    }
    const { text, originalTokenCount } = session.pending.take((maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS) * 4);
    const closed = session.handle.closed;
    if (closed) this.sessions.delete(sessionId);
    return {
      wallTimeMs: Date.now() - started,
      ...(closed ? { exitCode: session.handle.exitCode ?? -1 } : { sessionId }),
      ...(originalTokenCount !== undefined ? { originalTokenCount } : {}),
      output: warning + text,
    };
  }
}
