/** `initialize`: a new session, or the resume of one, and what the executor is. */
import { Type, type Static } from "@sinclair/typebox";
import { Opt, ProcessIdSchema, Seq, SessionIdSchema } from "./common.js";
import { EnvironmentInfoSchema } from "./environment.js";

// ---------------------------------------------------------------- initialize

/** More than a session can hold by default (256 processes), few enough that a resume stays cheap. */
export const CURSORS_MAX_ENTRIES = 16384;

export const InitializeParamsSchema = Type.Object(
  {
    clientName: Type.String({ maxLength: 256 }),
    resumeSessionId: Opt(SessionIdSchema),
    /** Extension: when resuming a session another socket still holds (a
     * half-open connection), evict that socket instead of failing with -32010. */
    takeover: Opt(Type.Boolean()),
    /** Extension: resume with cursors. For each process, the last seq the
     * client saw; the daemon replays every retained event after it as ordinary
     * notifications (after a `process/gap` if some were evicted), before any
     * live event of that process. */
    cursors: Opt(Type.Record(ProcessIdSchema, Seq, { additionalProperties: false, maxProperties: CURSORS_MAX_ENTRIES })),
    /** Extension: `process/output` as binary frames (see binary-frame.ts). */
    binaryOutput: Opt(Type.Boolean()),
    /** Extension: credit-based flow control. The daemon sends at most this
     * many output bytes per process that the client has not acknowledged with
     * `process/ack`, pausing the process (it blocks on write) until it does.
     * While several processes of the socket send output, the window is the
     * smaller `sharedAckWindowBytes` of the reply. */
    ackWindowBytes: Opt(Type.Integer({ minimum: 1024 })),
    /** Extension: follow this session read-only instead of creating or
     * resuming one (docs/sessions.md). Only the session's own identity, or a
     * credential with observer rights, may; to anyone else the session is
     * unknown. With `cursors`, each named process follows from its cursor;
     * every other from the start of its retained output. */
    observeSessionId: Opt(SessionIdSchema),
    /** Extension: how long the session waits for a resume once no
     * connection holds it, before its processes get SIGTERM (then SIGKILL
     * after the daemon's kill grace). Capped at the daemon's
     * --max-session-ttl-ms; absent: the daemon's --session-ttl-ms. */
    detachedTtlMs: Opt(Type.Integer({ minimum: 0 })),
    /** Extension: while no connection holds the session, it does not expire
     * as long as any of its processes runs; the TTL counts from the last one's
     * exit. Counted against --max-lasting-sessions-per-client. */
    keepWhileRunning: Opt(Type.Boolean()),
  }
);
export const InitializeResultSchema = Type.Object({
  sessionId: SessionIdSchema,
  /** Extension, only with `cursors`: processes named there that the session
   * no longer has (closed and past retention): their end was missed. */
  unknownProcessIds: Type.Optional(Type.Array(ProcessIdSchema)),
  /** Extension, only with `ackWindowBytes`: the window while one process
   * sends output on the socket (the client's own), and the window each
   * process gets while several do. Acknowledge at least every quarter of the
   * shared one, or a process may stall waiting for credit. */
  ackWindowBytes: Type.Optional(Type.Integer()),
  sharedAckWindowBytes: Type.Optional(Type.Integer()),
  /** What `environment/info` answers; today's Codex reads it here and asks nothing more. */
  environmentInfo: EnvironmentInfoSchema,
  /** Extension, only when the client sent `detachedTtlMs` or `keepWhileRunning`
   * (or observes): the session's lifetime as the daemon applies it. */
  detachedTtlMs: Type.Optional(Type.Integer()),
  keepWhileRunning: Type.Optional(Type.Boolean()),
});


export type InitializeParams = Static<typeof InitializeParamsSchema>;
export type InitializeResult = Static<typeof InitializeResultSchema>;
