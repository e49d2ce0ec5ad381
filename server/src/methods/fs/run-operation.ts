/**
 * Runs one of write-operations.ts's functions: in the daemon when the call
 * needs no confining, else inside the sandbox through a confined helper,
 * which imports that same module there (confined-call.ts). Either way its
 * errors come back as upstream maps them (fs-error.ts): the kernel's EROFS
 * for a write outside the writable roots, ENOENT, EACCES, or the
 * operation's own RpcError.
 */
import type { PreparedFsSandbox } from "../../sandbox/index.js";
import { runConfined } from "../../sandbox/confined-call.js";
import { mappingFsErrors } from "./fs-error.js";
import * as writeOperations from "./write-operations.js";

type Operations = typeof writeOperations;
type OperationName = { [K in keyof Operations]: Operations[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof Operations];
/** An operation's arguments without its trailing AbortSignal. */
type ArgumentsOf<K extends OperationName> = Parameters<Operations[K]> extends [...infer A, AbortSignal | undefined] ? A : never;

const MODULE = new URL("./write-operations.js", import.meta.url).href;

export function runWriteOperation<K extends OperationName>(
  confinement: PreparedFsSandbox | undefined,
  name: K,
  args: ArgumentsOf<K>,
  signal: AbortSignal,
): Promise<void> {
  return mappingFsErrors(async () => {
    if (confinement) {
      await runConfined(confinement, { module: MODULE, exportName: name, args }, signal);
      return;
    }
    const operation = writeOperations[name] as (...args: unknown[]) => Promise<void>;
    await operation(...args, signal);
  });
}
