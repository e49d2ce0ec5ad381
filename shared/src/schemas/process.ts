/** The process family: process/* requests and notifications. */
import { Type, type Static } from "@sinclair/typebox";
import {
  Base64,
  NoNulString,
  Nullable,
  Opt,
  PathUriSchema,
  ProcessIdSchema,
  Seq,
  Unsigned,
} from "./common.js";
import { FileSystemSandboxContextSchema } from "../sandbox-schemas.js";
import { ManagedNetworkSchema, RemoteNetworkProxyLaunchConfigSchema } from "./network-proxy.js";

export const OutputStreamSchema = Type.Union([
  Type.Literal("stdout"),
  Type.Literal("stderr"),
  Type.Literal("pty"),
]);
/**
 * Bounds that keep one request's cost linear and small (issue #22: 300k
 * names or a 15 MB pattern list froze the event loop for seconds). Far
 * above what a real environment has: Linux allows 2 MiB of argv and
 * environment in all.
 */
export const ENV_MAX_ENTRIES = 4096;
export const ENV_NAME_MAX_LENGTH = 1024;
export const GLOB_MAX_PATTERNS = 128;
export const GLOB_MAX_LENGTH = 256;

/** Environment maps: a name without `=` or NUL, a value without NUL. */
export const EnvMapSchema = Type.Record(Type.String({ pattern: `^[^=\\u0000]{1,${ENV_NAME_MAX_LENGTH}}$` }), NoNulString(), {
  additionalProperties: false,
  maxProperties: ENV_MAX_ENTRIES,
});
const GlobList = Type.Array(Type.String({ minLength: 1, maxLength: GLOB_MAX_LENGTH }), { maxItems: GLOB_MAX_PATTERNS });
const TerminalDimension = Type.Integer({ minimum: 1, maximum: 4096 });

// ---------------------------------------------------------------- process/start

export const EnvPolicySchema = Type.Object(
  {
    inherit: Type.Union([Type.Literal("all"), Type.Literal("core"), Type.Literal("none")]),
    ignoreDefaultExcludes: Opt(Type.Boolean()),
    exclude: Opt(GlobList),
    set: Opt(EnvMapSchema),
    includeOnly: Opt(GlobList),
  }
);

/** Which shell a snapshot is of: upstream's `ShellInfo` (name `bash`, `zsh` or `sh`; path as in argv[0]). */
export const ShellInfoSchema = Type.Object(
  { name: Type.String(), path: Type.String() },
  { serde: "struct ShellInfo" },
);
/** process/start's `shellSnapshot`: the scope a capture is shared in (Codex sends `<thread>:<environment>`) and the shell. */
export const ShellSnapshotRequestSchema = Type.Object(
  { scopeId: Type.String(), shell: ShellInfoSchema },
  { serde: "struct ShellSnapshotRequest" },
);

export const StartParamsSchema = Type.Object({
  processId: ProcessIdSchema,
  argv: Type.Array(NoNulString({ maxLength: 131072 })),
  cwd: PathUriSchema,
  env: Opt(EnvMapSchema),
  envPolicy: Opt(EnvPolicySchema),
  tty: Opt(Type.Boolean()),
  pipeStdin: Opt(Type.Boolean()),
  arg0: Opt(NoNulString({ maxLength: 4096 })),
  /** Telemetry only (threadId, toolCallId): accepted and ignored, as upstream. */
  metadata: Opt(Type.Object({})),
  /**
   * The permission profile to confine the process to (upstream's
   * FileSystemSandboxContext), enforced with bubblewrap (server/src/sandbox/);
   * what cannot be enforced exactly is refused: never run weaker than asked.
   */
  sandbox: Opt(FileSystemSandboxContextSchema),
  /** Upstream does not enforce this without a sandbox either; accepted as it is there. */
  enforceManagedNetwork: Opt(Type.Boolean()),
  managedNetwork: Opt(ManagedNetworkSchema),
  /** Start an executor-local proxy for this process and enforce its domain policy there (server/src/network-proxy/). */
  networkProxy: Opt(RemoteNetworkProxyLaunchConfigSchema),
  /**
   * Run a `-lc` login shell from a cached capture of its state instead
   * (shellSnapshotV2, server/src/shell-snapshot/). Its bounds (the scope's
   * 256 bytes, the shell's name) are checked by the daemon, in upstream's words.
   */
  shellSnapshot: Opt(ShellSnapshotRequestSchema),
  /** Extension: initial PTY size (upstream is fixed at 80x24). */
  cols: Opt(TerminalDimension),
  rows: Opt(TerminalDimension),
});
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
    maxBytes: Opt(Unsigned("usize")),
    waitMs: Opt(Unsigned("u64")),
    /** Extension: give each chunk its `timeMs` (recordings replay with the original timing). */
    timestamps: Opt(Type.Boolean()),
  }
);

export const OutputChunkSchema = Type.Object({
  seq: Seq,
  stream: OutputStreamSchema,
  chunk: Base64,
  /** Extension, only when the read asked for `timestamps`: when the daemon read the chunk from the process (Unix ms). */
  timeMs: Type.Optional(Type.Integer({ minimum: 0 })),
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
  /** Whether the sandbox denied something the process tried (upstream's heuristic); false without one. */
  sandboxDenied: Type.Boolean(),
  gap: Type.Optional(OutputGapSchema),
});

// ---------------------------------------------------------------- process/write

export const WriteParamsSchema = Type.Object(
  {
    processId: ProcessIdSchema,
    chunk: Base64,
    /** An empty one is refused by the handler, after the handshake check, as upstream. */
    writeId: Opt(Type.String({ maxLength: 256 })),
  }
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
  { processId: ProcessIdSchema, signal: Type.String({ minLength: 1, maxLength: 32 }) }
);

export const TerminateParamsSchema = Type.Object(
  { processId: ProcessIdSchema }
);
export const TerminateResultSchema = Type.Object({ running: Type.Boolean() });

// ---------------------------------------------------------------- extensions

export const ResizeParamsSchema = Type.Object(
  { processId: ProcessIdSchema, cols: TerminalDimension, rows: TerminalDimension }
);

export const CloseStdinParamsSchema = Type.Object(
  { processId: ProcessIdSchema }
);
export const CloseStdinResultSchema = Type.Object({ status: WriteStatusSchema });

export const AckParamsSchema = Type.Object(
  {
    processId: ProcessIdSchema,
    /** Output bytes of this process the client has consumed since its last ack. */
    bytes: Type.Integer({ minimum: 0 }),
  }
);

export const ListParamsSchema = Type.Object({});
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
export type EnvPolicy = Static<typeof EnvPolicySchema>;
export type StartParams = Static<typeof StartParamsSchema>;
export type ShellSnapshotRequest = Static<typeof ShellSnapshotRequestSchema>;
export type StartResult = Static<typeof StartResultSchema>;
export type SandboxType = Static<typeof SandboxTypeSchema>;
export type ReadParams = Static<typeof ReadParamsSchema>;
export type OutputChunk = Static<typeof OutputChunkSchema>;
export type OutputGap = Static<typeof OutputGapSchema>;
export type ReadResult = Static<typeof ReadResultSchema>;
export type WriteParams = Static<typeof WriteParamsSchema>;
export type WriteStatus = Static<typeof WriteStatusSchema>;
export type WriteResult = Static<typeof WriteResultSchema>;
export type SignalParams = Static<typeof SignalParamsSchema>;
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
