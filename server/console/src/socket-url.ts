/**
 * The console's WebSocket URL, from its own page's URL: the daemon serves the
 * page at BASE/console/ and the WebSocket at BASE/, so the page needs no
 * configuration behind a proxy's path prefix (agent-sandbox's router in path
 * routing mode, `<prefix>/<namespace>/<id>/<port>/console/`), which a browser
 * cannot replace with headers on a WebSocket.
 */
export function webSocketUrlOf(page: { readonly href: string }): string {
  const url = new URL("../", page.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = "";
  url.hash = "";
  return url.href;
}
