/**
 * Runs one of write-operations.ts's or read-operations.ts's functions: in
 * the daemon when the call needs no confining, else inside the sandbox
 * through a confined helper, which imports that same module there
 * (confined-call.ts). Either way its errors come back as upstream maps them
 * (fs-error.ts): the kernel's EROFS for a write outside the writable roots,
 * EACCES for a denied path, ENOENT, or the operation's own RpcError.
 */
import { pathToFileURL } from "node:url";
import type { PreparedFsSandbox } from "../../sandbox/index.js";
import { inPackage } from "../../package-root.js";
import { runConfined } from "../../sandbox/confined-call.js";
import { mappingFsErrors } from "./fs-error.js";
import * as readOperations from "./read-operations.js";
import * as walkOperations from "./walk-tree.js";
import * as writeOperations from "./write-operations.js";

type AnyOperation = (...args: never[]) => Promise<unknown>;
type OperationName<M> = { [K in keyof M]: M[K] extends AnyOperation ? (K extends string ? K : never) : never }[keyof M];
type Operation<M, K extends keyof M> = M[K] extends AnyOperation ? M[K] : never;
type ResultOf<M, K extends keyof M> = Awaited<ReturnType<Operation<M, K>>>;
/** An operation's arguments without its trailing AbortSignal. */
type ArgumentsOf<M, K extends keyof M> = Parameters<Operation<M, K>> extends [...infer A, AbortSignal | undefined] ? A : never;

function runnerOf<M extends object>(moduleUrl: string, operations: M) {
  return <K extends OperationName<M>>(
    confinement: PreparedFsSandbox | undefined,
    name: K,
    args: ArgumentsOf<M, K>,
    signal: AbortSignal,
  ): Promise<ResultOf<M, K>> =>
    mappingFsErrors<ResultOf<M, K>>(() => {
      if (confinement) return runConfined(confinement, { module: moduleUrl, exportName: name, args }, signal) as Promise<ResultOf<M, K>>;
      const operation = operations[name] as unknown as (...args: unknown[]) => Promise<ResultOf<M, K>>;
      return operation(...(args as unknown[]), signal);
    });
}

// The confined helper imports them from dist/ (tsc's output), where they are whether or not the daemon runs from its bundle.
export const runWriteOperation = runnerOf(pathToFileURL(inPackage("dist", "methods", "fs", "write-operations.js")).href, writeOperations);
export const runReadOperation = runnerOf(pathToFileURL(inPackage("dist", "methods", "fs", "read-operations.js")).href, readOperations);
export const runWalkOperation = runnerOf(pathToFileURL(inPackage("dist", "methods", "fs", "walk-tree.js")).href, walkOperations);
