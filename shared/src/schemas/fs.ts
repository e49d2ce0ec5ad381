/**
 * The filesystem family: fs/* requests, as upstream's exec-server serves
 * them (codex-rs/exec-server-protocol). Every path is a PathUri. Values
 * upstream checks itself after decoding (a handle id's length, a block's
 * length, walk limits, `dataBase64`) are plain here, so the daemon can answer
 * with upstream's code and words (-32600) instead of a schema error.
 */
import { Type, type Static } from "@sinclair/typebox";
import { WireFileSystemSandboxContextSchema } from "../sandbox-schemas.js";
import { Base64, Opt, PathUriSchema, Unsigned } from "./common.js";

// ---------------------------------------------------------------- sandbox

/**
 * The sandbox context of an fs/* call: upstream's wire form, the one schema
 * process/start's sandbox shares (sandbox-schemas.ts). Its path URIs are
 * checked by the daemon, with upstream's codes and words.
 */
const Sandbox = Opt(WireFileSystemSandboxContextSchema);
/** Default true; the Rust client sends it only when false. */
const FollowSymlinks = Opt(Type.Boolean());

// ---------------------------------------------------------------- whole files

export const FsReadFileParamsSchema = Type.Object({ path: PathUriSchema, followSymlinks: FollowSymlinks, sandbox: Sandbox });
export const FsReadFileResultSchema = Type.Object({ dataBase64: Base64 });

export const FsWriteFileParamsSchema = Type.Object({
  path: PathUriSchema,
  /** Standard base64 with padding; decoded (and refused with upstream's words) by the daemon. */
  dataBase64: Type.String(),
  followSymlinks: FollowSymlinks,
  sandbox: Sandbox,
});

// ---------------------------------------------------------------- directories and metadata

export const FsCreateDirectoryParamsSchema = Type.Object({
  path: PathUriSchema,
  /** Default true. */
  recursive: Opt(Type.Boolean()),
  followSymlinks: FollowSymlinks,
  sandbox: Sandbox,
});

export const FsGetMetadataParamsSchema = Type.Object({ path: PathUriSchema, followSymlinks: FollowSymlinks, sandbox: Sandbox });
/** `isSymlink` describes the path itself; the rest its target. Times are Unix ms, 0 when unknown. */
export const FsGetMetadataResultSchema = Type.Object({
  isDirectory: Type.Boolean(),
  isFile: Type.Boolean(),
  isSymlink: Type.Boolean(),
  size: Type.Integer({ minimum: 0 }),
  createdAtMs: Type.Integer({ minimum: 0 }),
  modifiedAtMs: Type.Integer({ minimum: 0 }),
});

export const FsCanonicalizeParamsSchema = Type.Object({ path: PathUriSchema, sandbox: Sandbox });
export const FsCanonicalizeResultSchema = Type.Object({ path: PathUriSchema });

export const FsReadDirectoryParamsSchema = Type.Object({ path: PathUriSchema, sandbox: Sandbox });
export const FsReadDirectoryEntrySchema = Type.Object({
  fileName: Type.String(),
  isDirectory: Type.Boolean(),
  isFile: Type.Boolean(),
});
export const FsReadDirectoryResultSchema = Type.Object({ entries: Type.Array(FsReadDirectoryEntrySchema) });

/** Limits are checked by the daemon (zero, or past upstream's maximums, is -32600). */
export const FsWalkOptionsSchema = Type.Object({
  maxDepth: Type.Integer({ minimum: 0 }),
  maxDirectories: Type.Integer({ minimum: 0 }),
  maxEntries: Type.Integer({ minimum: 0 }),
  followDirectorySymlinks: Type.Boolean(),
  pruneHiddenDirectories: Opt(Type.Boolean()),
});
export const FsWalkParamsSchema = Type.Object({ path: PathUriSchema, options: FsWalkOptionsSchema, sandbox: Sandbox });
export const FsWalkResultSchema = Type.Object({
  entries: Type.Array(
    Type.Object({ path: PathUriSchema, kind: Type.Union([Type.Literal("directory"), Type.Literal("file")]) }),
  ),
  errors: Type.Array(Type.Object({ path: PathUriSchema, message: Type.String() })),
  truncated: Type.Boolean(),
});

export const FsRemoveParamsSchema = Type.Object({
  path: PathUriSchema,
  /** Default true. */
  recursive: Opt(Type.Boolean()),
  /** Default true: a path that does not exist is success. */
  force: Opt(Type.Boolean()),
  followSymlinks: FollowSymlinks,
  sandbox: Sandbox,
});

export const FsCopyParamsSchema = Type.Object({
  sourcePath: PathUriSchema,
  destinationPath: PathUriSchema,
  recursive: Type.Boolean(),
  sandbox: Sandbox,
});

// ---------------------------------------------------------------- streamed reads

/** At most 32 bytes (checked by the daemon); the Rust client uses a simple UUID. */
const HandleId = Type.String();

/**
 * `read` (the default) opens for fs/readBlock; `replace` (capability
 * fileWriteStreaming) creates the file or truncates it in place, for
 * fs/writeBlock. Absent means `read`; null is refused, as upstream.
 */
export const FsOpenModeSchema = Type.Union([Type.Literal("read"), Type.Literal("replace")]);
export const FsOpenParamsSchema = Type.Object({ handleId: HandleId, path: PathUriSchema, mode: Type.Optional(FsOpenModeSchema), sandbox: Sandbox });
export const FsOpenResultSchema = Type.Object({ handleId: HandleId });

export const FsReadBlockParamsSchema = Type.Object({
  handleId: HandleId,
  /** Any offset, in any order; past the end reads nothing. */
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  /** 1..=1048576, checked by the daemon. */
  len: Type.Integer({ minimum: 0 }),
});
/** `eof` is true when fewer than `len` bytes were read. */
export const FsReadBlockResultSchema = Type.Object({ chunk: Base64, eof: Type.Boolean() });

export const FsCloseParamsSchema = Type.Object({ handleId: HandleId });

/** Writes `chunk` (1..=1048576 bytes, checked by the daemon) at `offset` of a handle opened with mode `replace`. */
export const FsWriteBlockParamsSchema = Type.Object({
  handleId: HandleId,
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, serde: "u64" }),
  chunk: Base64,
});

export type FsOpenMode = Static<typeof FsOpenModeSchema>;

export type FsWalkOptions = Static<typeof FsWalkOptionsSchema>;
export type FsWalkResult = Static<typeof FsWalkResultSchema>;
export type FsGetMetadataResult = Static<typeof FsGetMetadataResultSchema>;
export type FsReadDirectoryEntry = Static<typeof FsReadDirectoryEntrySchema>;

// ---------------------------------------------------------------- watching for missing paths (capability fsWatchMissing)

/**
 * One watch per connection: a call with a larger `watchId` than any before
 * replaces the connection's watch, a smaller or equal one is ignored
 * (`watching: false`). `missing` are paths that do not exist (at most 64);
 * `present`, when given, a path that does and is no symlink. The watch fires
 * once, with fs/missingChanged, when any of them (or a directory above them)
 * is created, removed or changed.
 */
export const FsWatchMissingParamsSchema = Type.Object({
  watchId: Unsigned("u64"),
  missing: Type.Array(PathUriSchema),
  present: Opt(PathUriSchema),
});
/** False when nothing is watched: the id was not new, or a path was not as claimed, or past a limit. */
export const FsWatchMissingResultSchema = Type.Object({ watching: Type.Boolean() });
export const FsMissingChangedNotificationSchema = Type.Object({ watchId: Unsigned("u64") });

export type FsWatchMissingParams = Static<typeof FsWatchMissingParamsSchema>;
