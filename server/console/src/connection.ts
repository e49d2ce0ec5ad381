/**
 * Connecting: with the saved token if there is one; when the daemon refuses,
 * the token form asks for one. A browser cannot see why a WebSocket upgrade
 * failed (no HTTP status), so the daemon's open /livez tells the two cases
 * apart: it answers (the token was the problem) or it does not (the daemon
 * is unreachable: say so, and offer a retry).
 */
import { connect, RpcRequestError, type ConnectOptions, type ExecmuxClient } from "@execmux/client";
import { webSocketUrlOf } from "./socket-url.js";
import { forgetToken, loadToken, saveToken } from "./saved-state.js";
import type { GateState, TokenForm } from "./token-form.js";

/** Where the daemon is, from the console page's own URL (see socket-url.ts). */
export interface DaemonAddress {
  /** ws:// or wss:// URL of the JSON-RPC endpoint. */
  readonly rpcUrl: string;
  /** http(s):// URL of the same base, for /livez. */
  readonly httpBase: string;
}

export function daemonAddress(page: { readonly href: string }): DaemonAddress {
  const base = new URL("../", page.href);
  base.search = "";
  base.hash = "";
  return { rpcUrl: webSocketUrlOf(page), httpBase: base.href };
}

export async function connectThroughGate(address: DaemonAddress, form: TokenForm, options: ConnectOptions): Promise<ExecmuxClient> {
  for (;;) {
    const token = loadToken();
    try {
      const client = await connect(address.rpcUrl, { ...options, ...(token ? { token } : {}) });
      form.hide();
      return client;
    } catch (error) {
      // The daemon answered (an expired session, say): not a question of reaching it.
      if (error instanceof RpcRequestError) throw error;
      const state = await diagnose(address, token, error as Error);
      if (state.kind !== "unreachable") forgetToken();
      const entered = await form.ask(state);
      if (entered !== undefined) saveToken(entered);
    }
  }
}

async function diagnose(address: DaemonAddress, token: string | undefined, error: Error): Promise<GateState> {
  try {
    const probe = await fetch(`${address.httpBase}livez`, { cache: "no-store" });
    if (probe.ok) return token ? { kind: "refused" } : { kind: "needed" };
    const reason = (await probe.text()).trim();
    return { kind: "unreachable", url: address.rpcUrl, detail: `the daemon answered HTTP ${probe.status}${reason ? `: ${reason}` : ""}` };
  } catch {
    // Not even the health check answers: the daemon is down, or the network is in the way.
    return { kind: "unreachable", url: address.rpcUrl, detail: `No answer from the daemon (${error.message.replace(/^cannot connect to \S+:?\s*/, "") || "the connection failed"}).` };
  }
}
