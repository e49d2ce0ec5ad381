/**
 * The protocol's JSON Schemas, written once with TypeBox. The daemon compiles
 * these with ajv to validate every message; every TypeScript type in the
 * protocol is derived from them with `Static<>`, never written by hand.
 *
 * Optional fields also accept `null`, because upstream (Rust/serde) clients
 * serialize `None` as `null`.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { FileSystemSandboxContextSchema } from "./sandbox-schemas.js";

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

/** Strings that reach execve or the environment must not hold NUL bytes. */
const NO_NUL = "^[^\\u0000]*$";
const NoNulString = (options: { minLength?: number; maxLength?: number } = {}) =>
  Type.String({ ...options, pattern: NO_NUL });

const Seq = Type.Integer({ minimum: 0 });
const Base64 = Type.String({ pattern: "^[A-Za-z0-9+/]*={0,2}$", description: "standard base64" });

export const ProcessIdSchema = Type.String({ minLength: 1, maxLength: 256 });
export const SessionIdSchema = Type.String({ minLength: 1, maxLength: 128 });
export const OutputStreamSchema = Type.Union([
  Type.Literal("stdout"),
  Type.Literal("stderr"),
  Type.Literal("pty"),
]);
/** Environment maps: a name without `=` or NUL, a value without NUL. */
export const EnvMapSchema = Type.Record(Type.String({ pattern: "^[^=\\u0000]+$" }), NoNulString(), {
  additionalProperties: false,
});
const GlobList = Type.Array(Type.String({ minLength: 1, maxLength: 1024 }));
const TerminalDimension = Type.Integer({ minimum: 1, maximum: 4096 });

// ---------------------------------------------------------------- initialize

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
    cursors: Opt(Type.Record(ProcessIdSchema, Seq, { additionalProperties: false })),
    /** Extension: `process/output` as binary frames (see binary-frame.ts). */
    binaryOutput: Opt(Type.Boolean()),
    /** Extension: credit-based flow control. The daemon sends at most this
     * many output bytes per process that the client has not acknowledged with
     * `process/ack`, pausing the process (it blocks on write) until it does.
     * While several processes of the socket send output, the window is the
     * smaller `sharedAckWindowBytes` of the reply. */
    ackWindowBytes: Opt(Type.Integer({ minimum: 1024 })),
  },
  { additionalProperties: false },
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
});

// ---------------------------------------------------------------- process/start

export const EnvPolicySchema = Type.Object(
  {
    inherit: Type.Union([Type.Literal("all"), Type.Literal("core"), Type.Literal("none")]),
    ignoreDefaultExcludes: Opt(Type.Boolean()),
    exclude: Opt(GlobList),
    set: Opt(EnvMapSchema),
    includeOnly: Opt(GlobList),
  },
  { additionalProperties: false },
);

export const StartParamsSchema = Type.Object(
  {
    processId: ProcessIdSchema,
    argv: Type.Array(NoNulString({ maxLength: 131072 })),
    cwd: NoNulString({ minLength: 1, maxLength: 4096 }),
    env: Opt(EnvMapSchema),
    envPolicy: Opt(EnvPolicySchema),
    tty: Opt(Type.Boolean()),
    pipeStdin: Opt(Type.Boolean()),
    arg0: Opt(NoNulString({ maxLength: 4096 })),
    /** The permission profile to confine the process to; refused (-32602) when it cannot be enforced. */
    sandbox: Opt(FileSystemSandboxContextSchema),
    /** Fail closed on the network even where the profile allows it (upstream's managed network). */
    enforceManagedNetwork: Opt(Type.Boolean()),
    /** A proxy policy the client already put into `env`; its presence is all the sandbox looks at. */
    managedNetwork: Opt(Type.Object({})),
    /** Extension: initial PTY size (upstream is fixed at 80x24). */
    cols: Opt(TerminalDimension),
    rows: Opt(TerminalDimension),
  },
  { additionalProperties: false },
);
/** Which OS sandbox confines the process: upstream's enum; execmux runs without one or with bubblewrap. */
export const SandboxTypeSchema = Type.Union([
  Type.Literal("none"),
  Type.Literal("macosSeatbelt"),
  Type.Literal("linuxSeccomp"),
  Type.Literal("windowsRestrictedToken"),
  Type.Literal("windowsMxc"),
]);
export const StartResultSchema = Type.Object({ processId: ProcessIdSchema, sandboxType: SandboxTypeSchema });

// ---------------------------------------------------------------- process/read

export const ReadParamsSchema = Type.Object(
  {
    processId: ProcessIdSchema,
    afterSeq: Opt(Seq),
    maxBytes: Opt(Type.Integer({ minimum: 0 })),
    waitMs: Opt(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const OutputChunkSchema = Type.Object({
  seq: Seq,
  stream: OutputStreamSchema,
  chunk: Base64,
});

/**
 * Extension: output the reader asked for but that was evicted from the
 * retention buffer. Present only when something after the reader's cursor is
 * gone; upstream silently starts later instead.
 */
export const OutputGapSchema = Type.Object({
  /** First seq after the cursor that is gone. */
  fromSeq: Seq,
  /** Last seq that is gone; the next retained chunk is toSeq + 1. */
  toSeq: Seq,
  /** How many output chunks were in that range. */
  chunks: Type.Integer({ minimum: 0 }),
  /** How many output bytes were in that range. */
  bytes: Type.Integer({ minimum: 0 }),
  /** False when the cursor is so old that only a lower bound of `bytes` is
   * known (the daemon keeps the sizes of the last few thousand evicted chunks). */
  bytesExact: Type.Boolean(),
});

export const ReadResultSchema = Type.Object({
  chunks: Type.Array(OutputChunkSchema),
  nextSeq: Seq,
  exited: Type.Boolean(),
  exitCode: Nullable(Type.Integer()),
  closed: Type.Boolean(),
  failure: Nullable(Type.String()),
  /** Upstream's guess that a sandbox stopped the process (always false without one). */
  sandboxDenied: Type.Boolean(),
  gap: Type.Optional(OutputGapSchema),
});

// ---------------------------------------------------------------- process/write

export const WriteParamsSchema = Type.Object(
  {
    processId: ProcessIdSchema,
    chunk: Base64,
    writeId: Opt(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);
export const WriteStatusSchema = Type.Union([
  Type.Literal("accepted"),
  Type.Literal("unknownProcess"),
  Type.Literal("stdinClosed"),
  Type.Literal("starting"),
]);
export const WriteResultSchema = Type.Object({ status: WriteStatusSchema });

// ---------------------------------------------------------------- signal, terminate

export const SignalParamsSchema = Type.Object(
  { processId: ProcessIdSchema, signal: Type.String({ minLength: 1, maxLength: 32 }) },
  { additionalProperties: false },
);
export const EmptyResultSchema = Type.Object({});

export const TerminateParamsSchema = Type.Object(
  { processId: ProcessIdSchema },
  { additionalProperties: false },
);
export const TerminateResultSchema = Type.Object({ running: Type.Boolean() });

// ---------------------------------------------------------------- extensions

export const ResizeParamsSchema = Type.Object(
  { processId: ProcessIdSchema, cols: TerminalDimension, rows: TerminalDimension },
  { additionalProperties: false },
);

export const CloseStdinParamsSchema = Type.Object(
  { processId: ProcessIdSchema },
  { additionalProperties: false },
);
export const CloseStdinResultSchema = Type.Object({ status: WriteStatusSchema });

export const AckParamsSchema = Type.Object(
  {
    processId: ProcessIdSchema,
    /** Output bytes of this process the client has consumed since its last ack. */
    bytes: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export const ListParamsSchema = Type.Object({}, { additionalProperties: false });
export const ProcessStateSchema = Type.Union([
  Type.Literal("starting"),
  Type.Literal("running"),
  Type.Literal("exited"),
  Type.Literal("closed"),
]);
export const ProcessInfoSchema = Type.Object({
  processId: ProcessIdSchema,
  state: ProcessStateSchema,
  tty: Type.Boolean(),
  pid: Nullable(Type.Integer()),
  exitCode: Nullable(Type.Integer()),
  /** POSIX name of the signal that killed it, if one did. */
  signal: Nullable(Type.String()),
  nextSeq: Seq,
  /** Seq of the oldest chunk still retained, or nextSeq when none is. */
  firstRetainedSeq: Seq,
  retainedBytes: Type.Integer({ minimum: 0 }),
});
export const ListResultSchema = Type.Object({ processes: Type.Array(ProcessInfoSchema) });

// ---------------------------------------------------------------- notifications

export const OutputNotificationSchema = Type.Object({
  processId: ProcessIdSchema,
  seq: Seq,
  stream: OutputStreamSchema,
  chunk: Base64,
});
export const ExitedNotificationSchema = Type.Object({
  processId: ProcessIdSchema,
  seq: Seq,
  exitCode: Type.Integer(),
  sandboxDenied: Type.Boolean(),
});
export const ClosedNotificationSchema = Type.Object({
  processId: ProcessIdSchema,
  seq: Seq,
});
/** Extension, sent only during a resume with cursors: what was evicted after the cursor. */
export const GapNotificationSchema = Type.Composite([Type.Object({ processId: ProcessIdSchema }), OutputGapSchema]);

// ---------------------------------------------------------------- derived types

export type OutputStream = Static<typeof OutputStreamSchema>;
export type EnvMap = Static<typeof EnvMapSchema>;
export type InitializeParams = Static<typeof InitializeParamsSchema>;
export type InitializeResult = Static<typeof InitializeResultSchema>;
export type EnvPolicy = Static<typeof EnvPolicySchema>;
export type StartParams = Static<typeof StartParamsSchema>;
export type SandboxType = Static<typeof SandboxTypeSchema>;
export type StartResult = Static<typeof StartResultSchema>;
export type ReadParams = Static<typeof ReadParamsSchema>;
export type OutputChunk = Static<typeof OutputChunkSchema>;
export type OutputGap = Static<typeof OutputGapSchema>;
export type ReadResult = Static<typeof ReadResultSchema>;
export type WriteParams = Static<typeof WriteParamsSchema>;
export type WriteStatus = Static<typeof WriteStatusSchema>;
export type WriteResult = Static<typeof WriteResultSchema>;
export type SignalParams = Static<typeof SignalParamsSchema>;
export type EmptyResult = Static<typeof EmptyResultSchema>;
export type TerminateParams = Static<typeof TerminateParamsSchema>;
export type TerminateResult = Static<typeof TerminateResultSchema>;
export type ResizeParams = Static<typeof ResizeParamsSchema>;
export type CloseStdinParams = Static<typeof CloseStdinParamsSchema>;
export type CloseStdinResult = Static<typeof CloseStdinResultSchema>;
export type ListParams = Static<typeof ListParamsSchema>;
export type AckParams = Static<typeof AckParamsSchema>;
export type ProcessState = Static<typeof ProcessStateSchema>;
export type ProcessInfo = Static<typeof ProcessInfoSchema>;
export type ListResult = Static<typeof ListResultSchema>;
export type OutputNotification = Static<typeof OutputNotificationSchema>;
export type ExitedNotification = Static<typeof ExitedNotificationSchema>;
export type ClosedNotification = Static<typeof ClosedNotificationSchema>;
export type GapNotification = Static<typeof GapNotificationSchema>;
