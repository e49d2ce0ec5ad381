/**
 * What the Sessions panel needs from the daemon, as one small interface:
 * the sessions this console's credential may see, and read-only watching of
 * their processes. Built on the sessions extension when the daemon has it;
 * without it, only this console's own session is listed.
 */
import { ErrorCode, RpcRequestError, type ExecmuxClient } from "@execmux/client";

export interface ProcessSummary {
  readonly processId: string;
  /** argv, when the daemon says. */
  readonly command?: readonly string[];
  readonly state: string;
  readonly tty: boolean;
  readonly exitCode: number | null;
  readonly startedAtMs?: number;
}

export interface SessionSummary {
  readonly sessionId: string;
  readonly clientName?: string;
  /** Whether a connection holds it now. */
  readonly attached?: boolean;
  /** This console's own session. */
  readonly own: boolean;
  readonly processes: readonly ProcessSummary[];
}

export interface SessionsSource {
  /** False when the daemon has no session listing: only the console's own session is shown. */
  readonly listsOthers: boolean;
  list(): Promise<SessionSummary[]>;
}

/** The console's own session, from process/list: what every daemon can answer. */
export async function ownSession(client: ExecmuxClient): Promise<SessionSummary> {
  const processes = await client.list();
  return {
    sessionId: client.sessionId,
    clientName: "this console",
    attached: true,
    own: true,
    processes: processes.map((process) => ({ processId: process.processId, state: process.state, tty: process.tty, exitCode: process.exitCode })),
  };
}

export const isMethodNotFound = (error: unknown) => error instanceof RpcRequestError && error.code === ErrorCode.MethodNotFound;

export function sessionsSource(client: ExecmuxClient): SessionsSource {
  return { listsOthers: false, list: async () => [await ownSession(client)] };
}
