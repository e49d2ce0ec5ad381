/**
 * Upstream's `map_fs_error`: an io error becomes -32004 when Rust calls it
 * NotFound, -32600 for InvalidInput and PermissionDenied, -32603 for the
 * rest, always with the OS's own words (`No such file or directory (os error
 * 2)`). Codex maps the codes back to io::ErrorKind and shows the message, so
 * both must match for a client to behave the same with either executor.
 */
import { ErrorCode } from "@execmux/shared/errors"; // not the index: see errors/rpc-error.ts
import { ioErrorKind, osErrorMessage } from "../../os-error.js";
import { RpcError, internalError, invalidRequest } from "../../errors/rpc-error.js";

export const notFound = (message: string) => new RpcError(ErrorCode.NotFound, message);

/** The RpcError for anything a filesystem call threw; RpcErrors pass through. */
export function fsError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = (code === undefined ? undefined : osErrorMessage(code)) ?? (error instanceof Error ? error.message : String(error));
  switch (ioErrorKind(code)) {
    case "NotFound":
      return notFound(message);
    case "InvalidInput":
    case "PermissionDenied":
      return invalidRequest(message);
    default:
      return internalError(message);
  }
}

/** Runs a filesystem step, turning whatever it throws into upstream's error. */
export async function mappingFsErrors<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw fsError(error);
  }
}

export const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;
