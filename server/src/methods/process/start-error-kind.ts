/**
 * `error.data.kind` of a failed `process/start`, as upstream 0.171 reports it
 * (its ProcessStartErrorData). The code and message stay as before; the kind
 * lets a client tell a missing program from a refused one without parsing
 * the OS wording. Upstream sorts spawn failures by Rust's io::ErrorKind of
 * the OS error, the same whether the working directory or the program failed
 * (a missing cwd is spawnNotFound like a missing program; a cwd that is a
 * file is ENOTDIR, spawnFailed).
 */
import { ioErrorKind } from "../../os-error.js";

export type ProcessStartErrorKind = "spawnNotFound" | "spawnPermissionDenied" | "spawnFailed" | "sandboxUnavailable" | "sandboxPreparation";

/**
 * The kind of a spawn failure with this errno name (ENOENT, EACCES...), or
 * an execmux-internal code (EPTY, ESPAWNER...: spawnFailed). Whether the
 * program or the working directory failed does not change it (asked of
 * 0.171: a missing cwd and a missing program are both spawnNotFound).
 */
export function spawnErrorKind(errno: string): ProcessStartErrorKind {
  switch (ioErrorKind(errno)) {
    case "NotFound":
      return "spawnNotFound";
    case "PermissionDenied":
      return "spawnPermissionDenied";
    default:
      return "spawnFailed";
  }
}

/**
 * The kind of a sandbox refusal: no sandbox can run on this host at all
 * (sandboxUnavailable), or this request's profile could not be turned into
 * one (sandboxPreparation: a bad permission path, an entry the sandbox cannot
 * express).
 */
export function sandboxErrorKind(unavailable: boolean): ProcessStartErrorKind {
  return unavailable ? "sandboxUnavailable" : "sandboxPreparation";
}
