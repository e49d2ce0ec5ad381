/**
 * What an observer may call: methods that only read. Everything else (a
 * start, a write, a signal, a resize, every fs/* and http/* method, and any
 * method added later until it is listed here) is refused with -32013, so an
 * observer's credential can never act on the session or the machine.
 */
import { ErrorCode, type RequestMethod } from "@execmux/shared";
import { RpcError } from "../errors/rpc-error.js";

const OBSERVER_METHODS: ReadonlySet<string> = new Set<RequestMethod>([
  "environment/info",
  "environment/status",
  "process/read",
  "process/list",
  // Ignored for an observer: its output is never held for credit.
  "process/ack",
  "session/list",
]);

export function refuseUnlessObserverMay(method: string): void {
  if (OBSERVER_METHODS.has(method)) return;
  throw new RpcError(
    ErrorCode.ObserverReadOnly,
    `${method} is refused: this connection observes a session read-only (it may read output, list processes and sessions)`,
  );
}
