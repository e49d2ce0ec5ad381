/**
 * Execmux's session extensions (docs/sessions.md): `session/list`, the
 * sessions and processes the caller's identity may see, and
 * `process/started`, which tells an observer of each process it follows.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable, Opt, SessionIdSchema, Unsigned } from "./common.js";
import { ProcessInfoSchema } from "./process.js";

/** Milliseconds since the Unix epoch. */
const Timestamp = Type.Integer({ minimum: 0 });

/**
 * How a process was started, as listings and observers see it. The argv is
 * cut to a bounded size (a start may carry a megabyte of it):
 * `argvTruncated` says so.
 */
export const ProcessOriginSchema = Type.Object({
  argv: Type.Array(Type.String()),
  argvTruncated: Type.Boolean(),
  /** When the daemon started it. */
  startedAt: Timestamp,
});

export const SessionProcessSchema = Type.Composite([
  ProcessInfoSchema,
  ProcessOriginSchema,
  Type.Object({
    /** When it exited, or null while it runs. */
    exitedAt: Nullable(Timestamp),
  }),
]);

export const SessionSummarySchema = Type.Object({
  sessionId: SessionIdSchema,
  /** The clientName of the connection that last held it. */
  clientName: Type.String(),
  /** Made by the caller's own identity (false: visible through observer rights). */
  own: Type.Boolean(),
  /** The session the calling connection itself holds or observes. */
  current: Type.Boolean(),
  createdAt: Timestamp,
  /** A connection holds it now. */
  attached: Type.Boolean(),
  /** When the last connection left it; null while one holds it. */
  detachedAt: Nullable(Timestamp),
  /** When it ends unless resumed; null while attached, or while it is kept for a running process. */
  expiresAt: Nullable(Timestamp),
  detachedTtlMs: Type.Integer({ minimum: 0 }),
  keepWhileRunning: Type.Boolean(),
  /** Connections observing it now. */
  observers: Type.Integer({ minimum: 0 }),
  processes: Type.Array(SessionProcessSchema),
});

export const SessionListParamsSchema = Type.Object({
  /** Only this session (when the caller may see it). */
  sessionId: Opt(SessionIdSchema),
  /** The `nextCursor` of the previous page. */
  cursor: Opt(Unsigned("u64")),
});

export const SessionListResultSchema = Type.Object({
  /** Oldest first. */
  sessions: Type.Array(SessionSummarySchema),
  /** Present when more sessions follow: pass it as `cursor` for the next page. */
  nextCursor: Type.Optional(Type.Integer({ minimum: 0 })),
});

/** Extension, sent to observers only: a process of the observed session, before any of its events. */
export const ProcessStartedNotificationSchema = Type.Composite([
  Type.Object({ processId: Type.String(), tty: Type.Boolean() }),
  ProcessOriginSchema,
]);

export type ProcessOrigin = Static<typeof ProcessOriginSchema>;
export type SessionProcess = Static<typeof SessionProcessSchema>;
export type SessionSummary = Static<typeof SessionSummarySchema>;
export type SessionListParams = Static<typeof SessionListParamsSchema>;
export type SessionListResult = Static<typeof SessionListResultSchema>;
export type ProcessStartedNotification = Static<typeof ProcessStartedNotificationSchema>;
