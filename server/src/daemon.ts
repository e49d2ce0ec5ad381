/**
 * The daemon: a Fastify server whose `GET /` upgrades to the JSON-RPC
 * WebSocket (after the auth hook said yes), a registry of sessions, and an
 * orderly shutdown that leaves no process behind.
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import websocket from "@fastify/websocket";
import { ConnectionQuota } from "./auth/connection-quota.js";
import { HostAllowList } from "./auth/host-check.js";
import { authorize, selectProtocol } from "./auth/request-auth.js";
import { TokenStore } from "./auth/token-store.js";
import { loggerOptions } from "./log/logger-options.js";
import { CONSOLE_PREFIX, registerConsole } from "./console-assets.js";
import { ConfigError, parseListen, type Config } from "./config.js";
import { Metrics } from "./metrics.js";
import { Connection } from "./rpc/connection.js";
import { PollAfterInput } from "./rpc/poll-after-input.js";
import { SessionRegistry } from "./session/session-registry.js";
import { Spawner } from "./spawner/spawner.js";

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

/** How often shutdown checks whether every process has exited after SIGTERM. */
const SHUTDOWN_POLL_MS = 10;
/** The one path that upgrades to the JSON-RPC WebSocket. */
const RPC_PATH = "/";
/** Who a request's client is, for the per-client quotas: set by the auth hook, read by the upgrade. */
const clientOf = new WeakMap<FastifyRequest["raw"], string>();

function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

export async function startDaemon(config: Config): Promise<Daemon> {
  const { host, port } = parseListen(config.listen);
  const tls = config.tlsCert || config.tlsKey;
  if (tls && !(config.tlsCert && config.tlsKey)) throw new ConfigError("--tls-cert and --tls-key go together");

  // The logger exists before the tokens (it reports their loading) and masks them once they do.
  let tokens: TokenStore | undefined;
  const app: FastifyInstance = Fastify({
    logger: loggerOptions(config, () => tokens?.formsToRedact ?? []),
    ...(tls ? { https: { cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) } } : {}),
  });

  tokens = new TokenStore(config.token, config.tokenFile, (count, error) =>
    error ? app.log.error({ err: error }, "cannot read the token file; keeping the previous tokens") : app.log.info({ count }, "tokens loaded"),
  );
  if (!tokens.enabled && !isLoopback(host)) {
    if (!config.insecureNoAuth) {
      throw new ConfigError(
        `refusing to listen on ${host} without a token: anyone who can reach it could run commands. ` +
          "Set --token or --token-file (EXECMUX_TOKEN / EXECMUX_TOKEN_FILE), or pass --insecure-no-auth if you really mean it.",
      );
    }
    app.log.warn(`INSECURE: listening on ${host} without authentication; anyone who can reach this port can run any command`);
  }
  const stopWatchingTokens = tokens.watch();
  const allowedOrigins = config.allowedOrigins.split(",").map((origin) => origin.trim()).filter(Boolean);
  // DNS rebinding only gets a page as far as a daemon that needs no token;
  // with tokens the Host is checked only when the operator listed names.
  const hosts = !tokens.enabled || config.allowedHosts !== "" ? new HostAllowList(host, config.allowedHosts) : undefined;
  const connectionQuota = new ConnectionQuota(config.maxConnectionsPerClient);

  const metrics = new Metrics();
  // Started first, while the daemon is small: every child is forked from it.
  const spawner = new Spawner(
    (code, signal) => app.log.error({ code, signal }, "the spawner process exited; its children were killed and a new one is starting"),
    (details) => app.log.warn(details, "a start timed out waiting for the spawner process"),
  );
  const pollAfterInput = new PollAfterInput(config.pollAfterInputMicros);
  const registry = new SessionRegistry({
    detachedSessionTtlMs: config.sessionTtlMs,
    closedRetentionMs: config.closedRetentionMs,
    maxSessions: config.maxSessions,
    maxSessionsPerClient: config.maxSessionsPerClient,
    maxDetachedSessions: config.maxDetachedSessions,
    maxProcessesPerSession: config.maxProcessesPerSession,
    maxProcesses: config.maxProcesses,
    metrics,
    log: app.log,
  });

  await app.register(websocket, { options: { maxPayload: config.maxMessageBytes, handleProtocols: selectProtocol } });

  // Health endpoints are open; everything else needs the token when tokens are configured.
  const openPaths = new Set(["/livez", "/readyz", ...(config.metricsNeedToken ? [] : ["/metrics"])]);
  const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => {
    request.log.warn({ status }, message);
    if (status === 401) reply.header("www-authenticate", 'Bearer realm="execmux"');
    return reply.code(status).send({ error: message });
  };
  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0]!;
    // Only the RPC endpoint upgrades, whatever else the path would serve.
    if (request.ws && path !== RPC_PATH) return refuse(request, reply, 404, `only ${RPC_PATH} accepts WebSocket connections`);
    if (hosts && !hosts.allows(request.headers.host)) return refuse(request, reply, 403, "host not allowed (see --allowed-hosts)");
    if (openPaths.has(path) || path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`)) return;
    const decision = authorize(request.headers, request.url, {
      allowedOrigins,
      secure: Boolean(tls),
      tokensRequired: tokens.enabled,
      identify: (token) => tokens.identify(token),
    });
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
      new Connection(socket, { registry, config, log: request.log, metrics, spawner, pollAfterInput }, peer);
    },
  });
  registerConsole(app);
  app.get("/livez", async () => ({ status: "ok" }));
  // Ready only once listening and able to spawn (the spawner ran a test child).
  app.get("/readyz", async (_request, reply) =>
    spawner.ready ? { status: "ready" } : reply.code(503).send({ status: "starting" }),
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
      await terminateEverything(registry, config.killGraceMs);
      spawner.stop();
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

/** SIGTERM to every tree, a grace period to exit, then SIGKILL to what is left. */
async function terminateEverything(registry: SessionRegistry, graceMs: number): Promise<void> {
  const sessions = registry.all();
  for (const session of sessions) for (const process of session.list()) process.terminate();
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && !sessions.every((session) => session.allExited)) {
    await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_POLL_MS));
  }
  registry.killAll();
}
