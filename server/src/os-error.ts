/**
 * An OS error in the words upstream's Rust std gives it
 * (`No such file or directory (os error 2)`), and the io::ErrorKind Rust
 * sorts it into: Codex shows the message as it is and maps fs errors to
 * JSON-RPC codes by kind, so both matter for a drop-in executor.
 */
import { constants } from "node:os";

/**
 * musl's strerror text for the errors a spawn or a file operation meets:
 * the Codex binaries for Linux on npm are linked with musl, so that is what
 * upstream says (`Symbolic link loop`, where glibc says `Too many levels of
 * symbolic links`; checked against codex 0.169.0).
 */
const STRERROR: Readonly<Record<string, string>> = {
  EPERM: "Operation not permitted",
  ENOENT: "No such file or directory",
  EIO: "I/O error",
  ENXIO: "No such device or address",
  E2BIG: "Argument list too long",
  ENOEXEC: "Exec format error",
  EBADF: "Bad file descriptor",
  EAGAIN: "Resource temporarily unavailable",
  ENOMEM: "Out of memory",
  EACCES: "Permission denied",
  EBUSY: "Resource busy",
  EEXIST: "File exists",
  EXDEV: "Cross-device link",
  ENOTDIR: "Not a directory",
  EISDIR: "Is a directory",
  EINVAL: "Invalid argument",
  ENFILE: "Too many open files in system",
  EMFILE: "No file descriptors available",
  ETXTBSY: "Text file busy",
  EFBIG: "File too large",
  ENOSPC: "No space left on device",
  EROFS: "Read-only file system",
  EMLINK: "Too many links",
  ENAMETOOLONG: "Filename too long",
  ENOTEMPTY: "Directory not empty",
  ELOOP: "Symbolic link loop",
  EOVERFLOW: "Value too large for data type",
  EDQUOT: "Quota exceeded",
};

export type IoErrorKind = "NotFound" | "PermissionDenied" | "InvalidInput" | "Other";

/** `No such file or directory (os error 2)` for "ENOENT"; undefined for a code that is not an errno name. */
export function osErrorMessage(code: string): string | undefined {
  const number = (constants.errno as Readonly<Record<string, number>>)[code];
  if (number === undefined || !Object.hasOwn(constants.errno, code)) return undefined;
  return `${STRERROR[code] ?? code} (os error ${number})`;
}

/** Rust std's decode_error_kind, for the kinds Codex tells apart. */
export function ioErrorKind(code: string | undefined): IoErrorKind {
  switch (code) {
    case "ENOENT":
      return "NotFound";
    case "EACCES":
    case "EPERM":
      return "PermissionDenied";
    case "EINVAL":
      return "InvalidInput";
    default:
      return "Other";
  }
}
