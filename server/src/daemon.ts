/**
 * The daemon: a Fastify server whose `GET /` upgrades to the JSON-RPC
 * WebSocket (after the auth hook said yes), a registry of sessions, and an
 * orderly shutdown that leaves no process behind.
 */
import { readFileSync } from "node:fs";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import websocket from "@fastify/websocket";
import { ConnectionQuota } from "./auth/connection-quota.js";
import { HostAllowList } from "./auth/host-check.js";
import { authorize, selectProtocol } from "./auth/request-auth.js";
import { TokenStore } from "./auth/token-store.js";
import { CONSOLE_PREFIX, registerConsole } from "./console-assets.js";
import type { Config } from "./config.js";
import { checkListenerSettings } from "./listener-settings.js";
import { isLoopback } from "./loopback.js";
import { loggerOptions } from "./logger.js";
import type { Metrics } from "./metrics.js";
import type { Runtime } from "./runtime.js";
import type { SessionRegistry } from "./session/session-registry.js";
import { onClientSocketError, SHUTDOWN_CLOSE } from "./transport/websocket-transport.js";

export interface Listener {
  /** ws://HOST:PORT (wss:// with TLS) with the port actually bound. */
  readonly url: string;
  readonly port: number;
  readonly log: FastifyBaseLogger;
  /** Re-reads the token file (SIGHUP). */
  reloadTokens(): void;
  /** Stops accepting, closes every socket, terminates every process tree. */
  close(): Promise<void>;
}

/**
 * The daemon: its listener, and the runtime behind it (the sessions, and the
 * process host where every process lives).
 */
export interface Daemon extends Listener {
  readonly registry: SessionRegistry;
  readonly metrics: Metrics;
  readonly runtime: Runtime;
  /**
   * Stops listening and lets go of the process host, leaving it every
   * session and process for the next daemon (SIGUSR2: a restart, an
   * upgrade). Clients are told to come back (close 1012) and resume there.
   */
  leave(): Promise<void>;
}

/** The one path that upgrades to the JSON-RPC WebSocket. */
const RPC_PATH = "/";
/** Who a request's client is, for the per-client quotas: set by the auth hook, read by the upgrade. */
const clientOf = new WeakMap<FastifyRequest["raw"], string>();

export async function startDaemon(config: Config): Promise<Daemon> {
  let runtime: Runtime | undefined;
  const listener = await startListener(config, async (log) => {
    // Loaded here, after the listener's own modules: the process host starts meanwhile.
    const { openRuntime } = await import("./runtime.js");
    runtime = await openRuntime(config, log);
    return runtime;
  });
  const opened = runtime!;
  return {
    ...listener,
    registry: opened.registry,
    metrics: opened.metrics,
    runtime: opened,
    leave: async () => {
      await listener.stopAccepting(SERVICE_RESTART_CLOSE);
      opened.leave();
    },
  };
}

/** Clients of a daemon handing its sessions over: come back in a moment (the next daemon resumes them). */
const SERVICE_RESTART_CLOSE = { code: 1012, reason: "execmux is restarting: reconnect and resume" } as const;

/** HTTP, the auth hook and the WebSocket upgrade, in front of `backend`. */
async function startListener(config: Config, makeRuntime: (log: FastifyBaseLogger) => Promise<Runtime>): Promise<Listener & { stopAccepting(close: { code: number; reason: string }): Promise<void> }> {
  const { host, port, tls, wsAuth } = checkListenerSettings(config);

  // The logger exists before the tokens (it reports their loading) and masks them once they do.
  let tokens: TokenStore | undefined;
  const app: FastifyInstance = Fastify({
    logger: loggerOptions(config, () => tokens?.formsToRedact ?? []),
    ...(tls ? { https: { cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) } } : {}),
  });

  tokens = new TokenStore(config.token, config.tokenFile, (count, error) =>
    error ? app.log.error({ err: error }, "cannot read the token file; keeping the previous tokens") : app.log.info({ count }, "tokens loaded"),
  );
  // Any configured kind of token admits a request; with none, only the Origin check applies.
  const credentials = [...(tokens.enabled ? [tokens.asCredential()] : []), ...(wsAuth ? [wsAuth] : [])];
  if (credentials.length === 0 && !isLoopback(host)) {
    app.log.warn(`INSECURE: listening on ${host} without authentication; anyone who can reach this port can run any command`);
  }
  const stopWatchingTokens = tokens.watch();
  const allowedOrigins = config.allowedOrigins.split(",").map((origin) => origin.trim()).filter(Boolean);
  // DNS rebinding only gets a page as far as a daemon that needs no token;
  // with tokens the Host is checked only when the operator listed names.
  const hosts = credentials.length === 0 || config.allowedHosts !== "" ? new HostAllowList(host, config.allowedHosts) : undefined;
  const connectionQuota = new ConnectionQuota(config.maxConnectionsPerClient);
  /** Set once the daemon is stopping: new WebSockets are refused meanwhile. */
  let closing: Promise<void> | undefined;

  const runtime = await makeRuntime(app.log);

  await app.register(websocket, {
    options: {
      maxPayload: config.maxMessageBytes,
      handleProtocols: selectProtocol,
    },
    errorHandler: (error, socket, request) => onClientSocketError(error, socket, request.log),
  });

  // Health endpoints are open; everything else needs the token when tokens are configured.
  const openPaths = new Set(["/livez", "/readyz", ...(config.metricsNeedToken ? [] : ["/metrics"])]);
  const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => {
    request.log.warn({ status }, message);
    // Upstream answers without this header; HTTP requires it on a 401.
    if (status === 401) reply.header("www-authenticate", 'Bearer realm="execmux"');
    // Upstream's form: the reason as plain text.
    return reply.code(status).type("text/plain; charset=utf-8").send(message);
  };
  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0]!;
    if (closing && request.ws) return refuse(request, reply, 503, "the daemon is shutting down");
    // No sandboxed process talks to the daemon, with a token or without (issue #34): asked of the host before anything else.
    if (await sandboxedPeer(request)) return refuse(request, reply, 403, "a sandboxed process may not connect to the execmux daemon");
    // Only the RPC endpoint upgrades, whatever else the path would serve.
    if (request.ws && path !== RPC_PATH) return refuse(request, reply, 404, `only ${RPC_PATH} accepts WebSocket connections`);
    if (hosts && !hosts.allows(request.headers.host)) return refuse(request, reply, 403, "host not allowed (see --allowed-hosts)");
    if (openPaths.has(path) || path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`)) return;
    const decision = await authorize(request.headers, request.url, { allowedOrigins, secure: Boolean(tls), credentials });
    if (!decision.allowed) return refuse(request, reply, decision.status, decision.message);
    if (!request.ws) return;
    const client = `${decision.tokenId ?? "-"}@${request.ip}`;
    if (!connectionQuota.allows(client)) {
      return refuse(request, reply, 429, `this client already has its maximum of ${config.maxConnectionsPerClient} connections`);
    }
    clientOf.set(request.raw, client);
  });
  // Fastify's own 404 logs the URL, query string and all.
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: "not found" }));

  app.route({
    method: "GET",
    url: "/",
    handler: (_request, reply) =>
      reply.type("text/plain").send("execmux daemon: open a WebSocket on this URL and speak JSON-RPC (see README).\n"),
    wsHandler: (socket, request) => {
      request.log.info({ remote: request.socket.remoteAddress }, "connection opened");
      const client = clientOf.get(request.raw) ?? `-@${request.ip}`;
      const closed = connectionQuota.opened(client);
      socket.once("close", (code) => {
        closed();
        request.log.info({ code }, "connection closed");
      });
      const peer = { transport: "websocket", address: `${request.socket.remoteAddress}:${request.socket.remotePort}`, client };
      runtime.serveWebSocket(socket, peer, request.log);
    },
  });
  registerConsole(app);
  app.get("/livez", async () => ({ status: "ok" }));
  // Ready only while able to spawn: a test child ran through the process host
  // within the last few seconds (one is spawned now if not).
  app.get("/readyz", async (_request, reply) =>
    (await runtime.host.ready().catch(() => false)) ? { status: "ready" } : reply.code(503).send({ status: "unable to spawn" }),
  );
  app.get("/metrics", async (_request, reply) => {
    const { contentType, text } = await runtime.metrics.exposition();
    return reply.type(contentType).send(text);
  });

  /** Whether the request's connection comes from a sandboxed process (asked once per connection). */
  const peerVerdicts = new WeakMap<object, Promise<boolean>>();
  function sandboxedPeer(request: FastifyRequest): Promise<boolean> {
    if (!runtime.host.needsPeerChecks) return Promise.resolve(false);
    const socket = request.raw.socket;
    let verdict = peerVerdicts.get(socket);
    if (!verdict) {
      const local = { address: socket.localAddress ?? "", port: socket.localPort ?? 0 };
      const remote = { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 };
      // Refused when it cannot be told: a host that cannot answer cannot vouch for anyone.
      verdict = runtime.host.isSandboxedPeer(local, remote).catch(() => true);
      peerVerdicts.set(socket, verdict);
    }
    return verdict;
  }

  try {
    await app.listen({ host, port });
  } catch (error) {
    // The port is taken: a persistent host keeps its sessions for a daemon that can listen; a private one ends.
    stopWatchingTokens();
    await runtime.close();
    throw error;
  }
  const address = app.server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  /** Stops accepting and closes every client with `how`; the runtime is the caller's to end or leave. */
  const stopAccepting = (how: { code: number; reason: string }) =>
    (closing ??= (async () => {
      stopWatchingTokens();
      // Told why (Fastify's own close sends no code).
      for (const client of app.websocketServer.clients) client.close(how.code, how.reason);
      await app.close();
    })());
  const close = async () => {
    await stopAccepting(SHUTDOWN_CLOSE);
    await runtime.close();
  };

  return {
    url: `${tls ? "wss" : "ws"}://${urlHost}:${boundPort}`,
    port: boundPort,
    log: app.log,
    reloadTokens: () => tokens.reload(),
    close,
    stopAccepting,
  };
}
