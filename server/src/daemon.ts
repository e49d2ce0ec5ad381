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
import { loadWsAuth, wsAuthSettings } from "./auth/ws-auth.js";
import { CONSOLE_PREFIX, registerConsole } from "./console-assets.js";
import { ConfigError, parseListen, type Config } from "./config.js";
import { isLoopback } from "./loopback.js";
import { loggerOptions } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { Connection } from "./rpc/connection.js";
import { startRuntime } from "./runtime.js";
import type { SessionRegistry } from "./session/session-registry.js";
import { WebSocketTransport } from "./transport/websocket-transport.js";

export interface Daemon {
  /** ws://HOST:PORT (wss:// with TLS) with the port actually bound. */
  readonly url: string;
  readonly port: number;
  readonly registry: SessionRegistry;
  readonly log: FastifyBaseLogger;
  readonly metrics: Metrics;
  /** Re-reads the token file (SIGHUP). */
  reloadTokens(): void;
  /** Stops accepting, closes every socket, terminates every process tree. */
  close(): Promise<void>;
}

/** The one path that upgrades to the JSON-RPC WebSocket. */
const RPC_PATH = "/";
/** Who a request's client is, for the per-client quotas: set by the auth hook, read by the upgrade. */
const clientOf = new WeakMap<FastifyRequest["raw"], string>();

export async function startDaemon(config: Config): Promise<Daemon> {
  const { host, port } = parseListen(config.listen);
  const tls = config.tlsCert || config.tlsKey;
  if (tls && !(config.tlsCert && config.tlsKey)) throw new ConfigError("--tls-cert and --tls-key go together");
  // Upstream's --ws-auth options, checked and their files read before anything starts.
  const wsAuthSetting = wsAuthSettings(config);
  const wsAuth = wsAuthSetting && loadWsAuth(wsAuthSetting);

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
    if (!config.insecureNoAuth) {
      throw new ConfigError(
        `refusing to listen on ${host} without a token: anyone who can reach it could run commands. ` +
          "Set --token or --token-file (EXECMUX_TOKEN / EXECMUX_TOKEN_FILE) or --ws-auth, or pass --insecure-no-auth if you really mean it.",
      );
    }
    app.log.warn(`INSECURE: listening on ${host} without authentication; anyone who can reach this port can run any command`);
  }
  const stopWatchingTokens = tokens.watch();
  const allowedOrigins = config.allowedOrigins.split(",").map((origin) => origin.trim()).filter(Boolean);
  // DNS rebinding only gets a page as far as a daemon that needs no token;
  // with tokens the Host is checked only when the operator listed names.
  const hosts = credentials.length === 0 || config.allowedHosts !== "" ? new HostAllowList(host, config.allowedHosts) : undefined;
  const connectionQuota = new ConnectionQuota(config.maxConnectionsPerClient);

  const runtime = startRuntime(config, app.log);
  const { metrics, registry, spawner } = runtime;

  await app.register(websocket, {
    options: { maxPayload: config.maxMessageBytes, handleProtocols: selectProtocol },
    errorHandler: (error, socket, request) => {
      // A client's protocol error (a frame over --max-message-bytes, bad
      // framing): \`ws\` is already closing the socket with the right code,
      // which the client needs to see, so no terminate() and no stack trace.
      const code = (error as { code?: unknown }).code;
      if (typeof code === "string" && code.startsWith("WS_ERR_")) {
        request.log.warn({ code }, `closing the connection: ${error.message}`);
        return;
      }
      request.log.error({ err: error }, "connection failed");
      socket.terminate();
    },
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
      metrics.connections.inc();
      socket.once("close", (code) => {
        closed();
        metrics.connections.dec();
        request.log.info({ code }, "connection closed");
      });
      const peer = { transport: "websocket", address: `${request.socket.remoteAddress}:${request.socket.remotePort}`, client };
      new Connection(new WebSocketTransport(socket), runtime.connectionDeps(request.log), peer);
    },
  });
  registerConsole(app);
  app.get("/livez", async () => ({ status: "ok" }));
  // Ready only while able to spawn: a test child ran through the spawner
  // within the last few seconds (one is spawned now if not).
  app.get("/readyz", async (_request, reply) =>
    (await spawner.checkReady()) ? { status: "ready" } : reply.code(503).send({ status: "unable to spawn" }),
  );
  app.get("/metrics", async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

  await spawner.whenReady();
  await app.listen({ host, port });
  const address = app.server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      stopWatchingTokens();
      await app.close();
      await runtime.close();
    })());

  return {
    url: `${tls ? "wss" : "ws"}://${urlHost}:${boundPort}`,
    port: boundPort,
    registry,
    log: app.log,
    metrics,
    reloadTokens: () => tokens.reload(),
    close,
  };
}
