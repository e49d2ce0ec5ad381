/**
 * Every method and notification on the wire, with its schemas. The daemon
 * builds its validators and dispatch table from `RequestMethods`; the client's
 * `request()` is typed from it. Entries marked extension are execmux's own.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import * as S from "./schemas/index.js";

/**
 * The families upstream names in its handshake errors ("client must call
 * initialize before using <family> methods").
 */
export type MethodFamily =
  | "exec"
  | "environment info"
  | "environment status"
  | "environment config"
  | "filesystem"
  | "http"
  | "capability discovery";

interface MethodSpec {
  readonly params: TSchema;
  readonly result: TSchema;
  /** Undefined for methods that need no session: `initialize`, which opens
   * it, and `session/list`, which may come before it. */
  readonly family: MethodFamily | undefined;
  /** True for execmux extensions: absent from upstream. */
  readonly extension: boolean;
}

export const RequestMethods = {
  initialize: { params: S.InitializeParamsSchema, result: S.InitializeResultSchema, family: undefined, extension: false },
  "environment/info": { params: S.NoParamsSchema, result: S.EnvironmentInfoSchema, family: "environment info", extension: false },
  "environment/status": { params: S.NoParamsSchema, result: S.EnvironmentStatusResultSchema, family: "environment status", extension: false },
  "environmentConfig/read": {
    params: S.EnvironmentConfigReadParamsSchema,
    result: S.EnvironmentConfigReadResultSchema,
    family: "environment config",
    extension: false,
  },
  "process/start": { params: S.StartParamsSchema, result: S.StartResultSchema, family: "exec", extension: false },
  "process/read": { params: S.ReadParamsSchema, result: S.ReadResultSchema, family: "exec", extension: false },
  "process/write": { params: S.WriteParamsSchema, result: S.WriteResultSchema, family: "exec", extension: false },
  "process/signal": { params: S.SignalParamsSchema, result: S.EmptyResultSchema, family: "exec", extension: false },
  "process/terminate": { params: S.TerminateParamsSchema, result: S.TerminateResultSchema, family: "exec", extension: false },
  "process/resize": { params: S.ResizeParamsSchema, result: S.EmptyResultSchema, family: "exec", extension: true },
  "process/closeStdin": { params: S.CloseStdinParamsSchema, result: S.CloseStdinResultSchema, family: "exec", extension: true },
  "process/list": { params: S.ListParamsSchema, result: S.ListResultSchema, family: "exec", extension: true },
  /** Also accepted as a notification (no reply), which is how clients should send it. */
  "process/ack": { params: S.AckParamsSchema, result: S.EmptyResultSchema, family: "exec", extension: true },
  /** Before or after `initialize`: the sessions the caller's identity may see. */
  "session/list": { params: S.SessionListParamsSchema, result: S.SessionListResultSchema, family: undefined, extension: true },
  "http/request": { params: S.HttpRequestParamsSchema, result: S.HttpRequestResultSchema, family: "http", extension: false },
  "fs/readFile": { params: S.FsReadFileParamsSchema, result: S.FsReadFileResultSchema, family: "filesystem", extension: false },
  "fs/writeFile": { params: S.FsWriteFileParamsSchema, result: S.EmptyResultSchema, family: "filesystem", extension: false },
  "fs/createDirectory": { params: S.FsCreateDirectoryParamsSchema, result: S.EmptyResultSchema, family: "filesystem", extension: false },
  "fs/getMetadata": { params: S.FsGetMetadataParamsSchema, result: S.FsGetMetadataResultSchema, family: "filesystem", extension: false },
  "fs/canonicalize": { params: S.FsCanonicalizeParamsSchema, result: S.FsCanonicalizeResultSchema, family: "filesystem", extension: false },
  "fs/readDirectory": { params: S.FsReadDirectoryParamsSchema, result: S.FsReadDirectoryResultSchema, family: "filesystem", extension: false },
  "fs/walk": { params: S.FsWalkParamsSchema, result: S.FsWalkResultSchema, family: "filesystem", extension: false },
  "fs/remove": { params: S.FsRemoveParamsSchema, result: S.EmptyResultSchema, family: "filesystem", extension: false },
  "fs/copy": { params: S.FsCopyParamsSchema, result: S.EmptyResultSchema, family: "filesystem", extension: false },
  "fs/open": { params: S.FsOpenParamsSchema, result: S.FsOpenResultSchema, family: "filesystem", extension: false },
  "fs/readBlock": { params: S.FsReadBlockParamsSchema, result: S.FsReadBlockResultSchema, family: "filesystem", extension: false },
  /** Idempotent: closing an unknown handle succeeds. */
  "fs/close": { params: S.FsCloseParamsSchema, result: S.EmptyResultSchema, family: "filesystem", extension: false },
  "fs/writeBlock": { params: S.FsWriteBlockParamsSchema, result: S.EmptyResultSchema, family: "filesystem", extension: false },
  "fs/watchMissing": { params: S.FsWatchMissingParamsSchema, result: S.FsWatchMissingResultSchema, family: "filesystem", extension: false },
  "capabilityRoots/discoverV1": {
    params: S.CapabilityRootsDiscoverParamsSchema,
    result: S.CapabilityRootsDiscoverResultSchema,
    family: "capability discovery",
    extension: false,
  },
  "capabilities/discoverV2": {
    params: S.DiscoverV2CapabilitiesParamsSchema,
    result: S.DiscoverV2CapabilitiesResultSchema,
    family: "capability discovery",
    extension: false,
  },
} as const satisfies Record<string, MethodSpec>;

export type RequestMethod = keyof typeof RequestMethods;
export type ParamsOf<M extends RequestMethod> = Static<(typeof RequestMethods)[M]["params"]>;
export type ResultOf<M extends RequestMethod> = Static<(typeof RequestMethods)[M]["result"]>;

/** Client -> server notifications. */
export const ClientNotifications = {
  initialized: "initialized",
  /** Extension: credit flow control. */
  "process/ack": "process/ack",
} as const;

/** Server -> client notifications. */
export const ServerNotifications = {
  "process/output": S.OutputNotificationSchema,
  "process/exited": S.ExitedNotificationSchema,
  "process/closed": S.ClosedNotificationSchema,
  /** Extension: only after a resume with cursors. */
  "process/gap": S.GapNotificationSchema,
  /** Extension: only to observers, once per process before its events. */
  "process/started": S.ProcessStartedNotificationSchema,
  "http/request/bodyDelta": S.HttpRequestBodyDeltaSchema,
  /** A watch of fs/watchMissing fired (once). */
  "fs/missingChanged": S.FsMissingChangedNotificationSchema,
} as const satisfies Record<string, TSchema>;

export type ServerNotificationMethod = keyof typeof ServerNotifications;
export type ServerNotificationParams<M extends ServerNotificationMethod> = Static<
  (typeof ServerNotifications)[M]
>;

export function isRequestMethod(method: string): method is RequestMethod {
  return Object.hasOwn(RequestMethods, method);
}
