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
import { ANONYMOUS_IDENTITY } from "./auth/identity.js";
import { authorize, forwardedHost, presentedTokens, selectProtocol } from "./auth/request-auth.js";
import { TokenStore } from "./auth/token-store.js";
import { CONSOLE_PREFIX, registerConsole, ROOT_PAGE } from "./console-assets.js";
import type { Config } from "./config.js";
import { checkListenerSettings } from "./listener-settings.js";
import { isLoopback } from "./loopback.js";
import { loggerOptions } from "./logger.js";
import type { WebSocket } from "ws";
import { canHandOver, handOver } from "./host/front-handoff.js";
import { relayClient, type RelayedClient } from "./host/front-relay.js";
import { RelayedWebSocket } from "./host/relayed-websocket.js";
import { attachHost, type HostClient } from "./host/host-client.js";
import type { AdoptedClient } from "./host/host-protocol.js";
import type { Metrics } from "./metrics.js";
import type { PeerDescription } from "./rpc/connection.js";
import type { Runtime } from "./runtime.js";
import { settleWithin } from "./settle-within.js";
import type { SessionRegistry } from "./session/session-registry.js";
import { onClientSocketError, SHUTDOWN_CLOSE } from "./transport/websocket-transport.js";

/** What the HTTP side needs from whatever runs the sessions: this process, or a process host. */
interface Backend {
  /** A client's WebSocket, authorized: it now speaks JSON-RPC to the sessions. */
  accept(socket: WebSocket, peer: PeerDescription, log: FastifyBaseLogger): void;
  ready(): Promise<boolean>;
  metrics(): Promise<{ contentType: string; text: string }>;
  /** Terminates every process tree and stops. */
  close(): Promise<void>;
  /** The listener could not start: let go of what was taken for it (by default, close). */
  abandon?(): Promise<void>;
  /** The class ws makes each client's WebSocket of (a relay's does not parse frames). */
  readonly webSocketClass?: typeof WebSocket;
}

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

/** A daemon whose sessions live in this process (the library's and the tests' daemon). */
export interface Daemon extends Listener {
  readonly registry: SessionRegistry;
  readonly metrics: Metrics;
}

/** A daemon whose sessions live in the process host (host/host-main.ts) that forked it and outlives it: `execmux serve`. */
export interface FrontDaemon extends Listener {
  /** Its `lost` resolves if the host dies under this front (every session went with it). */
  readonly host: HostClient;
  /** Lets go of the host, leaving it every session (a restart, an upgrade); the process should exit next. */
  handOver(): Promise<void>;
}

/** How long a daemon handing over waits for the client sockets still on their way to the host. */
const HAND_OVER_WAIT_MS = 5_000;

/** Who a request's client is (auth/identity.ts): set by the auth hook, read by the upgrade. */
const clientOf = new WeakMap<FastifyRequest["raw"], string>();
/** Requests that presented an observer token (--observer-token-file): set by the auth hook, read by the upgrade. */
const observerRequests = new WeakSet<FastifyRequest["raw"]>();

export async function startDaemon(config: Config): Promise<Daemon> {
  let runtime: Runtime | undefined;
  const listener = await startListener(config, async (log) => {
    // Loaded here: a daemon whose sessions live in a process host never needs it.
    const { startRuntime } = await import("./runtime.js");
    runtime = startRuntime(config, log);
    // Started first, while the daemon is small: every child is forked from the spawner.
    await runtime.spawner.whenReady();
    return inProcessBackend(runtime);
  });
  return { ...listener, registry: runtime!.registry, metrics: runtime!.metrics };
}

function inProcessBackend(runtime: Runtime): Backend {
  const { metrics, spawner } = runtime;
  return {
    accept: (socket, peer, log) => runtime.serveWebSocket(socket, peer, log),
    ready: () => spawner.checkReady(),
    metrics: () => metrics.exposition(),
    close: () => runtime.close(),
  };
}

/**
 * `execmux serve`'s daemon, forked by the process host whose socket is
 * `hostSocket` (host/launcher.ts asked for it): this process only speaks
 * HTTP and hands each client's socket to the host, or relays a TLS
 * client's bytes to it.
 */
export async function startFrontDaemon(config: Config, hostSocket: string): Promise<FrontDaemon> {
  let host: HostClient | undefined;
  /** Each client by its number, for what the host says of it over the control link. */
  const links = new Map<number, RelayedClient>();
  let nextLinkId = 1;
  let handingOver = false;
  /** Sockets on their way to the host: a daemon handing over waits for them (their 101 has gone out). */
  const inFlight = new Set<Promise<void>>();
  const listener = await startListener(config, async (_log, quota) => {
    host = await attachHost(hostSocket);
    const client = host;
    /** Adopted clients that went before the adopt reply was taken in (it may share a read with their end). */
    const goneBeforeAdopted = new Set<number>();
    client.onClientEnd((linkId, how) => {
      const link = links.get(linkId);
      if (!link && linkId < 0) goneBeforeAdopted.add(linkId);
      else if (how === "terminate") link?.terminate();
      else link?.finished();
    });
    // Clients an earlier daemon handed over are still connected: they count against their quota here too.
    for (const adopted of (await client.request("adopt")) as AdoptedClient[]) {
      if (goneBeforeAdopted.has(adopted.linkId)) continue;
      const closed = quota.opened(adopted.client);
      const gone = () => {
        closed();
        links.delete(adopted.linkId);
      };
      links.set(adopted.linkId, { finished: gone, terminate: gone });
    }
    return {
      webSocketClass: RelayedWebSocket,
      accept: (socket, peer, connectionLog) => {
        const webSocket = socket as RelayedWebSocket;
        const linkId = nextLinkId++;
        webSocket.once("close", () => links.delete(linkId));
        const { socket: upgraded, head } = webSocket.take();
        if (canHandOver(upgraded)) {
          // The host owns the client from now on and says when it is gone.
          links.set(linkId, { finished: () => webSocket.ended(), terminate: () => webSocket.ended() });
          const handing = handOver(upgraded, head, peer, linkId)
            .catch((error: Error) => {
              connectionLog.error({ err: error }, "cannot hand the client to the process host");
              webSocket.ended();
            })
            .finally(() => inFlight.delete(handing));
          inFlight.add(handing);
          return;
        }
        upgraded.once("close", () => webSocket.ended());
        links.set(
          linkId,
          relayClient(upgraded, head, client.openClientLink(peer, linkId), (error) => connectionLog.error({ err: error }, "cannot reach the process host")),
        );
      },
      ready: async () => (await client.request("ready")) === true,
      metrics: async () => (await client.request("metrics")) as { contentType: string; text: string },
      close: async () => {
        if (handingOver) return;
        await client.request("shutdown").catch(() => undefined);
        // The host closed every client; one that does not read may never let its link's end through.
        for (const relayed of links.values()) relayed.finished();
      },
      // The host keeps whatever sessions it has for the next daemon, and ends once it has none.
      abandon: async () => client.detach(),
    };
  });
  return {
    ...listener,
    host: host!,
    handOver: async () => {
      // The host first, so the next daemon can attach at once; relayed (TLS)
      // clients see their sockets drop when this process exits, and resume there.
      handingOver = true;
      host!.detach();
      await settleWithin(Promise.allSettled([...inFlight]), HAND_OVER_WAIT_MS);
    },
  };
}

/** HTTP, the auth hook and the WebSocket upgrade, in front of `backend`. */
async function startListener(config: Config, makeBackend: (log: FastifyBaseLogger, quota: ConnectionQuota) => Promise<Backend>): Promise<Listener> {
  const { host, port, tls, wsAuth } = checkListenerSettings(config);

  // The logger exists before the tokens (it reports their loading) and masks them once they do.
  let tokens: TokenStore | undefined;
  let observerTokens: TokenStore | undefined;
  const app: FastifyInstance = Fastify({
    logger: loggerOptions(config, () => [...(tokens?.formsToRedact ?? []), ...(observerTokens?.formsToRedact ?? [])]),
    ...(tls ? { https: { cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) } } : {}),
  });

  tokens = new TokenStore(config.token, config.tokenFile, (count, error) =>
    error ? app.log.error({ err: error }, "cannot read the token file; keeping the previous tokens") : app.log.info({ count }, "tokens loaded"),
  );
  // Observer tokens admit a client like any token, and also let it list and observe every session.
  observerTokens = config.observerTokenFile
    ? new TokenStore("", config.observerTokenFile, (count, error) =>
        error
          ? app.log.error({ err: error }, "cannot read the observer token file; keeping the previous observer tokens")
          : app.log.info({ count }, "observer tokens loaded"),
      )
    : undefined;
  // Any configured kind of token admits a request; with none, only the Origin check applies.
  const credentials = [
    ...(tokens.enabled ? [tokens.asCredential()] : []),
    ...(observerTokens ? [observerTokens.asCredential()] : []),
    ...(wsAuth ? [wsAuth] : []),
  ];
  if (credentials.length === 0 && !isLoopback(host)) {
    app.log.warn(`INSECURE: listening on ${host} without authentication; anyone who can reach this port can run any command`);
  }
  const stopWatchingTokenFile = tokens.watch();
  const stopWatchingObserverTokens = observerTokens?.watch() ?? (() => undefined);
  const stopWatchingTokens = () => {
    stopWatchingTokenFile();
    stopWatchingObserverTokens();
  };
  const allowedOrigins = config.allowedOrigins.split(",").map((origin) => origin.trim()).filter(Boolean);
  // DNS rebinding only gets a page as far as a daemon that needs no token;
  // with tokens the Host is checked only when the operator listed names.
  const hosts = credentials.length === 0 || config.allowedHosts !== "" ? new HostAllowList(host, config.allowedHosts) : undefined;
  const connectionQuota = new ConnectionQuota(config.maxConnectionsPerClient);
  /** Set once the daemon is stopping: new WebSockets are refused meanwhile. */
  let closing: Promise<void> | undefined;

  const backend = await makeBackend(app.log, connectionQuota);

  await app.register(websocket, {
    options: {
      maxPayload: config.maxMessageBytes,
      handleProtocols: selectProtocol,
      // ws types its `WebSocket` option as the module, not as a class that extends WebSocket.
      ...(backend.webSocketClass ? { WebSocket: backend.webSocketClass as never } : {}),
    },
    errorHandler: (error, socket, request) => onClientSocketError(error, socket, request.log),
  });

  // Everything is served under --base-path (for a proxy that forwards its prefix); probes also at the root.
  const base = config.basePath;
  /** The one path that upgrades to the JSON-RPC WebSocket. */
  const rpcPath = `${base}/`;
  const consolePrefix = `${base}${CONSOLE_PREFIX}`;
  const healthPaths = [...new Set(["", base])].flatMap((prefix) => [`${prefix}/livez`, `${prefix}/readyz`]);
  // Health endpoints are open; everything else needs the token when tokens are configured.
  const openPaths = new Set([...healthPaths, ...(config.metricsNeedToken ? [] : [`${base}/metrics`])]);
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
    // Only the RPC endpoint upgrades, whatever else the path would serve.
    if (request.ws && path !== rpcPath) return refuse(request, reply, 404, `only ${rpcPath} accepts WebSocket connections`);
    // Behind a proxy that rewrites Host, the name the client used is in X-Forwarded-Host: both must be known.
    if (hosts && !(hosts.allows(request.headers.host) && hosts.allows(forwardedHost(request.headers)))) {
      return refuse(request, reply, 403, "host not allowed (see --allowed-hosts)");
    }
    // The plain page at the RPC path only says where the console is; upstream gates the WebSocket only, too.
    if (openPaths.has(path) || (path === rpcPath && !request.ws) || path === consolePrefix || path.startsWith(`${consolePrefix}/`)) return;
    const decision = await authorize(request.headers, request.url, { allowedOrigins, secure: Boolean(tls), credentials });
    if (!decision.allowed) return refuse(request, reply, decision.status, decision.message);
    if (!request.ws) return;
    // Never the address: on loopback a client can pick any of 127.0.0.0/8.
    const client = decision.identity;
    if (!connectionQuota.allows(client)) {
      return refuse(request, reply, 429, `this client already has its maximum of ${config.maxConnectionsPerClient} connections`);
    }
    clientOf.set(request.raw, client);
    if (observerTokens && presentedTokens(request.headers, request.url).some((token) => observerTokens.verify(token))) {
      observerRequests.add(request.raw);
    }
  });
  // Fastify's own 404 logs the URL, query string and all.
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: "not found" }));

  app.route({
    method: "GET",
    url: rpcPath,
    handler: (request, reply) =>
      (request.headers.accept ?? "").includes("text/html")
        ? reply.type("text/html; charset=utf-8").send(ROOT_PAGE)
        : reply.type("text/plain").send("execmux daemon: open a WebSocket on this URL and speak JSON-RPC (see README); the web console is at console/\n"),
    wsHandler: (socket, request) => {
      request.log.info({ remote: request.socket.remoteAddress }, "connection opened");
      const client = clientOf.get(request.raw) ?? ANONYMOUS_IDENTITY;
      const closed = connectionQuota.opened(client);
      socket.once("close", (code) => {
        closed();
        request.log.info({ code }, "connection closed");
      });
      const peer = {
        transport: "websocket",
        address: `${request.socket.remoteAddress}:${request.socket.remotePort}`,
        localPort: request.socket.localPort,
        client,
        observesAll: observerRequests.has(request.raw),
      };
      backend.accept(socket, peer, request.log);
    },
  });
  registerConsole(app, consolePrefix);
  for (const prefix of new Set(["", base])) {
    app.get(`${prefix}/livez`, async () => ({ status: "ok" }));
    // Ready only while able to spawn: a test child ran through the spawner
    // within the last few seconds (one is spawned now if not).
    app.get(`${prefix}/readyz`, async (_request, reply) =>
      (await backend.ready().catch(() => false)) ? { status: "ready" } : reply.code(503).send({ status: "unable to spawn" }),
    );
  }
  app.get(`${base}/metrics`, async (_request, reply) => {
    const { contentType, text } = await backend.metrics();
    return reply.type(contentType).send(text);
  });

  try {
    await app.listen({ host, port });
  } catch (error) {
    // The port is taken: whatever the backend holds is let go (a process host keeps its sessions).
    stopWatchingTokens();
    await (backend.abandon ?? backend.close)();
    throw error;
  }
  const address = app.server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  const close = () =>
    (closing ??= (async () => {
      stopWatchingTokens();
      // Told why (Fastify's own close sends no code). A process host closes
      // the clients it holds itself as it stops, so the backend goes before
      // the listener, which waits for every client's socket to close.
      for (const client of app.websocketServer.clients) client.close(SHUTDOWN_CLOSE.code, SHUTDOWN_CLOSE.reason);
      await backend.close();
      await app.close();
    })());

  return {
    url: `${tls ? "wss" : "ws"}://${urlHost}:${boundPort}`,
    port: boundPort,
    log: app.log,
    reloadTokens: () => {
      tokens.reload();
      observerTokens?.reload();
    },
    close,
  };
}
