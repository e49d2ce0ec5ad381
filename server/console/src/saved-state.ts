/** What survives a page reload (for this browser tab only): the session, its terminals, the token. */
export interface SavedState {
  sessionId: string;
  tabs: { processId: string; title: string; command?: string }[];
}

const STATE_KEY = "execmux.console.state";
const TOKEN_KEY = "execmux.console.token";

export function loadState(): SavedState | undefined {
  try {
    return JSON.parse(sessionStorage.getItem(STATE_KEY) ?? "null") ?? undefined;
  } catch {
    return undefined;
  }
}

export function saveState(state: SavedState): void {
  sessionStorage.setItem(STATE_KEY, JSON.stringify(state));
}

export function forgetState(): void {
  sessionStorage.removeItem(STATE_KEY);
}

export const loadToken = () => sessionStorage.getItem(TOKEN_KEY) ?? undefined;
export const saveToken = (token: string) => sessionStorage.setItem(TOKEN_KEY, token);
export const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);

/**
 * A link may carry the token in its fragment (`.../console/#token=...`): the
 * fragment never reaches a server or a proxy log. It is kept like a typed
 * token and removed from the address bar at once.
 */
export function takeTokenFromFragment(): void {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get("token");
  if (!token) return;
  saveToken(token);
  fragment.delete("token");
  const rest = fragment.toString();
  history.replaceState(null, "", `${location.pathname}${location.search}${rest ? `#${rest}` : ""}`);
}
