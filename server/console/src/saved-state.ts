/** What survives a page reload (for this tab only): the session, its terminals, the token. */
export interface SavedState {
  sessionId: string;
  tabs: { processId: string; title: string }[];
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

export const loadToken = () => sessionStorage.getItem(TOKEN_KEY) ?? undefined;
export const saveToken = (token: string) => sessionStorage.setItem(TOKEN_KEY, token);
export const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);
