/**
 * Reaching a sandbox through Kubernetes agent-sandbox's sandbox-router
 * (kubernetes-sigs/agent-sandbox, sandbox-router/proxy/headers.go): the
 * router picks the sandbox by the X-Sandbox-* headers and consumes
 * `Authorization` itself (its tokenreview and scoped-token modes read it,
 * and it is stripped before the sandbox sees it). So through a router the
 * daemon's own token rides in the WebSocket subprotocol, which the router
 * passes on, and `Authorization` carries the router's credential, if any.
 */
export interface RouterRoute {
  /** The sandbox's name (`X-Sandbox-ID`): a SandboxClaim's `status.sandbox.name`. */
  sandboxId: string;
  /** Its namespace (`X-Sandbox-Namespace`); the router's default is `default`. */
  namespace?: string;
  /** The port the daemon listens on in the pod (`X-Sandbox-Port`); the router's default is 8888. */
  port?: number;
  /** The router's own bearer token (its `scoped-token` or `tokenreview` mode), sent as `Authorization`. */
  token?: string;
}

/** The handshake headers that route to `route` (and authenticate to the router). */
export function routerHeaders(route: RouterRoute): Record<string, string> {
  return {
    "X-Sandbox-ID": route.sandboxId,
    ...(route.namespace !== undefined ? { "X-Sandbox-Namespace": route.namespace } : {}),
    ...(route.port !== undefined ? { "X-Sandbox-Port": String(route.port) } : {}),
    ...(route.token !== undefined ? { Authorization: `Bearer ${route.token}` } : {}),
  };
}
