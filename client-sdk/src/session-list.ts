/**
 * `session/list`, every page of it: from a connected client, or on a socket
 * of its own that never opens a session (`listSessions(url)`, what
 * `execmux ps` uses), so listing leaves nothing behind on the daemon.
 */
import type { ParamsOf, ResultOf, SessionSummary } from "@execmux/shared";
import { RpcClient } from "./rpc-client.js";
import { openSocket, type SocketOptions } from "./socket.js";

type ListPage = (params: ParamsOf<"session/list">) => Promise<ResultOf<"session/list">>;

/** Follows `nextCursor` until the last page. */
export async function collectSessions(listPage: ListPage, filter: { sessionId?: string }): Promise<SessionSummary[]> {
  const sessions: SessionSummary[] = [];
  let cursor: number | undefined;
  do {
    const page = await listPage({ ...filter, ...(cursor !== undefined ? { cursor } : {}) });
    sessions.push(...page.sessions);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return sessions;
}

export interface ListSessionsOptions extends SocketOptions {
  /** Only this session. */
  sessionId?: string;
  /** How long each page may take. Default 30 s. */
  requestTimeoutMs?: number;
}

/**
 * The sessions your identity may see (your own; every one with an observer
 * token), with their processes' commands, states and start times, without
 * creating a session.
 */
export async function listSessions(url: string, options: ListSessionsOptions = {}): Promise<SessionSummary[]> {
  const { sessionId, requestTimeoutMs = 30_000, ...socketOptions } = options;
  const socket = await openSocket(url, socketOptions);
  const rpc = new RpcClient(socket, () => undefined, () => undefined, () => undefined);
  try {
    return await collectSessions((params) => rpc.request("session/list", params, requestTimeoutMs), sessionId ? { sessionId } : {});
  } finally {
    rpc.close();
  }
}
