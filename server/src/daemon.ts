/**
 * The daemon: an HTTP server whose `GET BASE/` upgrades to the JSON-RPC
 * WebSocket (after the request's checks said yes), the health and metrics
 * endpoints and the console, in front of the runtime (the sessions, and the
 * process host where every process lives). node:http and ws, nothing more:
 * a handful of paths needs no framework, and a daemon in every sandbox
 * should start and rest as light as it can.
 */
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { ConnectionPace } from "./auth/connection-pace.js";
import { ConnectionQuota } from "./auth/connection-quota.js";
import { HostAllowList } from "./auth/host-check.js";
import { authorize, forwardedHost, presentedTokens, selectProtocol } from "./auth/request-auth.js";
import { TokenStore } from "./auth/token-store.js";
import { CONSOLE_PREFIX, ROOT_PAGE, serveConsole } from "./console-assets.js";
import type { Config } from "./config.js";
import { checkListenerSettings, type ListenerSettings } from "./listener-settings.js";
import { isLoopback } from "./loopback.js";
import { createLogger, type Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { persistentHost, type LaunchedHost } from "./host/host-launch.js";
import { HostRefusal } from "./host/host-link.js";
import { openRuntime, type Runtime } from "./runtime.js";
import { lifecycleOf } from "./rpc/turn-scheduler.js";

export { persistentHost } from "./host/host-launch.js";
import type { SessionRegistry } from "./session/session-registry.js";
import { onClientSocketError, SHUTDOWN_CLOSE } from "./transport/websocket-transport.js";

export interface Listener {
  /** ws://HOST:PORT (wss:// with TLS) with the port actually bound. */
  readonly url: string;
  readonly port: number;
  readonly log: Logger;
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

/** Clients of a daemon handing its sessions over: come back in a moment (the next daemon resumes them). */
const SERVICE_RESTART_CLOSE = { code: 1012, reason: "execmux is restarting: reconnect and resume" } as const;
/** How long stopping waits for clients to answer the close before their sockets are cut. */
const CLOSE_WAIT_MS = 5_000;

/** What a request may do, decided before it is answered or upgraded. */
type Verdict =
  | { readonly allowed: true; readonly client: string; readonly observesAll: boolean }
  | { readonly allowed: false; readonly status: number; readonly message: string };

/** How long a daemon that holds its port asks again of a host that another daemon (which cannot) is attached to. */
const ATTACH_RETRY_MS = 2000;

/**
 * The runtime, once its host took this daemon. Called with the port held: a
 * host that turned this daemon away because another daemon is attached has
 * one that cannot be serving this address (it cannot listen) and is about to
 * leave; so when two daemons for one address start at once, the one that
 * got the port asks again until the other has gone, and serves.
 */
async function attachedRuntime(opening: Promise<Runtime>, reopen: () => Promise<Runtime>): Promise<Runtime> {
  const giveUpAt = performance.now() + ATTACH_RETRY_MS;
  for (let attempt = opening; ; attempt = reopen()) {
    try {
      return await attempt;
    } catch (error) {
      if (!(error instanceof HostRefusal && error.message.includes("is attached to this process host")) || performance.now() > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * `launched`: the process host `execmux serve` already set about finding or starting (else it is done here);
 * `listener`: the settings `execmux serve` already checked before starting that host (else checked here).
 */
export async function startDaemon(config: Config, launched?: Promise<LaunchedHost>, listener: ListenerSettings = checkListenerSettings(config)): Promise<Daemon> {
  const { host, port, tls, wsAuth } = listener;
  // The logger exists before the tokens (it reports their loading) and masks them once they do.
  let tokens: TokenStore | undefined;
  let observerTokens: TokenStore | undefined;
  const log = createLogger(config, () => [...(tokens?.formsToRedact ?? []), ...(observerTokens?.formsToRedact ?? [])]);
  // The process host starts while the rest is set up: it is the longest step, and needs nothing below.
  const opening = openRuntime(config, log, undefined, launched);
  opening.catch(() => undefined);

  tokens = new TokenStore(config.token, config.tokenFile, (count, error) =>
    error ? log.error({ err: error }, "cannot read the token file; keeping the previous tokens") : log.info({ count }, "tokens loaded"),
  );
  // Observer tokens admit a client like any token, and also let it list and observe every session.
  observerTokens = config.observerTokenFile
    ? new TokenStore("", config.observerTokenFile, (count, error) =>
        error
          ? log.error({ err: error }, "cannot read the observer token file; keeping the previous observer tokens")
          : log.info({ count }, "observer tokens loaded"),
      )
    : undefined;
  // Any configured kind of token admits a request; with none, only the Origin check applies.
  const credentials = [
    ...(tokens.enabled ? [tokens.asCredential()] : []),
    ...(observerTokens ? [observerTokens.asCredential()] : []),
    ...(wsAuth ? [wsAuth] : []),
  ];
  if (credentials.length === 0 && !isLoopback(host)) {
    log.warn(`INSECURE: listening on ${host} without authentication; anyone who can reach this port can run any command`);
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
  const connectionPace = new ConnectionPace(config.maxNewConnectionsPerSecond);
  /** Set once the daemon is stopping: new WebSockets are refused meanwhile. */
  let closing: Promise<void> | undefined;

  // Everything is served under --base-path (for a proxy that forwards its prefix); probes also at the root.
  const base = config.basePath;
  /** The one path that upgrades to the JSON-RPC WebSocket. */
  const rpcPath = `${base}/`;
  const consolePrefix = `${base}${CONSOLE_PREFIX}`;
  const healthPaths = new Set([...new Set(["", base])].flatMap((prefix) => [`${prefix}/livez`, `${prefix}/readyz`]));
  // Health endpoints are open; everything else needs the token when tokens are configured.
  const openPaths = new Set([...healthPaths, ...(config.metricsNeedToken ? [] : [`${base}/metrics`])]);
  let nextRequest = 1;

  const server: Server = tls ? createHttpsServer({ cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) }) : createHttpServer();
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: config.maxMessageBytes,
    handleProtocols: (protocols) => selectProtocol(protocols),
    // One frame of a socket per pass of the event loop, not every frame of a network read at once: a
    // client's 64 KiB of small frames (a thousand lists, acks, garbage) was parsed and handed over in one
    // go, milliseconds in which no other socket was read, before its turns (rpc/turn-scheduler.ts) could share it out.
    allowSynchronousEvents: false,
  });
  let runtime: Runtime | undefined;

  /** Whether the request's connection comes from a sandboxed process (asked once per connection). */
  const peerVerdicts = new WeakMap<object, Promise<boolean>>();
  async function sandboxedPeer(request: IncomingMessage): Promise<boolean> {
    const host = (runtime ?? (await opening)).host;
    if (!host.needsPeerChecks) return false;
    const socket = request.socket;
    let verdict = peerVerdicts.get(socket);
    if (!verdict) {
      const local = { address: socket.localAddress ?? "", port: socket.localPort ?? 0 };
      const remote = { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 };
      // Refused when it cannot be told: a host that cannot answer cannot vouch for anyone.
      verdict = host.isSandboxedPeer(local, remote).catch(() => true);
      peerVerdicts.set(socket, verdict);
    }
    return verdict;
  }

  /** What every request goes through, an upgrade or not, before anything of it is done. */
  async function check(request: IncomingMessage, upgrade: boolean): Promise<Verdict> {
    const url = request.url ?? "/";
    const path = url.split("?")[0]!;
    if (closing && upgrade) return { allowed: false, status: 503, message: "the daemon is shutting down" };
    // No sandboxed process talks to the daemon, with a token or without (issue #34): asked of the host before anything else.
    if (await sandboxedPeer(request)) return { allowed: false, status: 403, message: "a sandboxed process may not connect to the execmux daemon" };
    // Only the RPC endpoint upgrades, whatever else the path would serve.
    if (upgrade && path !== rpcPath) return { allowed: false, status: 404, message: `only ${rpcPath} accepts WebSocket connections` };
    // Behind a proxy that rewrites Host, the name the client used is in X-Forwarded-Host: both must be known.
    if (hosts && !(hosts.allows(request.headers.host) && hosts.allows(forwardedHost(request.headers)))) {
      return { allowed: false, status: 403, message: "host not allowed (see --allowed-hosts)" };
    }
    // The plain page at the RPC path only says where the console is; upstream gates the WebSocket only, too.
    if (openPaths.has(path) || (!upgrade && (path === rpcPath || path === consolePrefix || path.startsWith(`${consolePrefix}/`)))) return { allowed: true, client: "", observesAll: false };
    const decision = await authorize(request.headers, url, { allowedOrigins, secure: tls, credentials });
    if (!decision.allowed) return decision;
    // Never the address: on loopback a client can pick any of 127.0.0.0/8.
    const client = decision.identity;
    if (upgrade && !connectionQuota.allows(client)) {
      return { allowed: false, status: 429, message: `this client already has its maximum of ${config.maxConnectionsPerClient} connections` };
    }
    // Observer tokens (--observer-token-file) also let the client list and observe every session.
    const observesAll = observerTokens !== undefined && presentedTokens(request.headers, url).some((token) => observerTokens.verify(token));
    return { allowed: true, client, observesAll };
  }

  function refusalHeaders(status: number, message: string): Record<string, string | number> {
    return {
      "content-type": "text/plain; charset=utf-8",
      "content-length": Buffer.byteLength(message),
      // Upstream answers without this header; HTTP requires it on a 401.
      ...(status === 401 ? { "www-authenticate": 'Bearer realm="execmux"' } : {}),
    };
  }

  function refused(request: IncomingMessage, verdict: Extract<Verdict, { allowed: false }>): void {
    log.warn({ reqId: `req-${nextRequest++}`, req: request, status: verdict.status }, verdict.message);
  }

  /** Plain HTTP: the health endpoints, metrics, the console, and a word on the RPC path. */
  async function answer(request: IncomingMessage, reply: ServerResponse): Promise<void> {
    const verdict = await check(request, false);
    if (!verdict.allowed) {
      refused(request, verdict);
      // Upstream's form: the reason as plain text.
      reply.writeHead(verdict.status, refusalHeaders(verdict.status, verdict.message)).end(verdict.message);
      return;
    }
    const path = (request.url ?? "/").split("?")[0]!;
    const json = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      reply.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) }).end(text);
    };
    if (request.method !== "GET" && request.method !== "HEAD") return json(404, { error: "not found" });
    const opened = runtime ?? (await opening);
    if (healthPaths.has(path) && path.endsWith("/livez")) return json(200, { status: "ok" });
    // Ready only while able to spawn: a test child ran through the process host within the last few seconds (one is spawned now if not).
    if (healthPaths.has(path)) return (await opened.host.ready().catch(() => false)) ? json(200, { status: "ready" }) : json(503, { status: "unable to spawn" });
    if (path === `${base}/metrics`) {
      const { contentType, text } = await opened.metrics.exposition();
      reply.writeHead(200, { "content-type": contentType }).end(text);
      return;
    }
    if (path === rpcPath) {
      // A browser gets a page linking to the console; anything else a line of text.
      if ((request.headers.accept ?? "").includes("text/html")) reply.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ROOT_PAGE);
      else reply.writeHead(200, { "content-type": "text/plain" }).end("execmux daemon: open a WebSocket on this URL and speak JSON-RPC (see README); the web console is at console/\n");
      return;
    }
    if (serveConsole(consolePrefix, path, request, reply)) return;
    json(404, { error: "not found" });
  }

  server.on("request", (request: IncomingMessage, reply: ServerResponse) => {
    answer(request, reply).catch((error: unknown) => {
      log.error({ err: error }, "a request failed");
      if (!reply.headersSent) reply.writeHead(500).end();
      else reply.destroy();
    });
  });

  /** The 101; from then on the WebSocket is the runtime's, with a log and a description of its peer. */
  function completeUpgrade(opened: Runtime, request: IncomingMessage, socket: Duplex, head: Buffer, verdict: Extract<Verdict, { allowed: true }>): void {
    if (closing) return void socket.destroy();
    sockets.handleUpgrade(request, socket, head, (webSocket: WebSocket) => {
      const reqId = `req-${nextRequest++}`;
      const connectionLog = log.child({ reqId });
      connectionLog.info({ remote: request.socket.remoteAddress }, "connection opened");
      webSocket.on("error", (error) => onClientSocketError(error, webSocket, connectionLog));
      webSocket.once("close", (code) => connectionLog.info({ code }, "connection closed"));
      const peer = {
        transport: "websocket",
        address: `${request.socket.remoteAddress}:${request.socket.remotePort}`,
        client: verdict.client,
        observesAll: verdict.observesAll,
        localPort: request.socket.localPort,
      };
      opened.serveWebSocket(webSocket, peer, connectionLog);
    });
  }

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => undefined);
    check(request, true).then(
      async (verdict) => {
        if (!verdict.allowed) {
          refused(request, verdict);
          const headers = Object.entries(refusalHeaders(verdict.status, verdict.message)).map(([name, value]) => `${name}: ${value}\r\n`).join("");
          socket.end(`HTTP/1.1 ${verdict.status} ${STATUS_CODES[verdict.status]}\r\nconnection: close\r\n${headers}\r\n${verdict.message}`);
          return;
        }
        const opened = runtime ?? (await opening);
        // Gone while it was being checked: nothing to count or upgrade.
        if (socket.destroyed) return;
        // Counted from now: an upgrade waiting for its pace or its turn counts against the client's connections.
        socket.once("close", connectionQuota.opened(verdict.client));
        // A client opening connections faster than its pace waits for its slot (auth/connection-pace.ts); then the
        // 101 and the connection's setup wait in its client's lifecycle place in the turns (rpc/turn-scheduler.ts).
        const upgrade = () =>
          opened.turns.run(lifecycleOf(verdict.client), () => {
            try {
              completeUpgrade(opened, request, socket, head, verdict);
            } catch (error) {
              log.error({ err: error }, "a connection failed in its upgrade");
              socket.destroy();
            }
          });
        const waitMs = connectionPace.take(verdict.client);
        if (waitMs === 0) return upgrade();
        // A socket that closes while it waits (reset, error) gives its slot back. One its client only half-closed
        // is not read, so it is dropped when its slot comes: either way the wait is bounded by the upgrades the
        // client has pending, which --max-connections-per-client counts.
        const giveBack = () => {
          clearTimeout(waiting);
          connectionPace.giveBack(verdict.client);
        };
        const waiting = setTimeout(() => {
          socket.off("close", giveBack);
          upgrade();
        }, waitMs).unref();
        socket.once("close", giveBack);
      },
      (error: unknown) => {
        log.error({ err: error }, "a connection failed before its upgrade");
        socket.destroy();
      },
    );
  });
  // A client that sends garbage or vanishes mid-request: its socket, never the daemon. Told 400 if it
  // can still hear it, as Node's own handler (replaced by this one) would have.
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.write("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    socket.destroy();
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.removeListener("error", reject);
        resolve();
      });
    });
    runtime = await attachedRuntime(opening, () => openRuntime(config, log));
  } catch (error) {
    // The port is taken (or the host would not start): a persistent host keeps its sessions for a daemon that can listen; a private one ends.
    stopWatchingTokens();
    server.close();
    await opening.then((opened) => (persistentHost(config) ? opened.leave() : opened.close()), () => undefined);
    throw error;
  }
  const opened = runtime;
  const address = server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  log.info(`listening at ${tls ? "https" : "http"}://${urlHost}:${boundPort}`);

  /** Stops accepting and closes every client with `how`; the runtime is the caller's to end or leave. */
  const stopAccepting = (how: { code: number; reason: string }) =>
    (closing ??= (async () => {
      stopWatchingTokens();
      server.close();
      const clients = [...sockets.clients];
      // Told why, then given a moment to answer the close before their sockets are cut.
      for (const client of clients) client.close(how.code, how.reason);
      await Promise.race([
        Promise.all(clients.map((client) => (client.readyState === client.CLOSED ? undefined : new Promise((resolve) => client.once("close", resolve))))),
        new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref()),
      ]);
      for (const client of sockets.clients) client.terminate();
      server.closeAllConnections();
    })());

  let ended: Promise<void> | undefined;
  return {
    url: `${tls ? "wss" : "ws"}://${urlHost}:${boundPort}`,
    port: boundPort,
    log,
    registry: opened.registry,
    metrics: opened.metrics,
    runtime: opened,
    reloadTokens: () => {
      tokens.reload();
      observerTokens?.reload();
    },
    close: () =>
      (ended ??= (async () => {
        await stopAccepting(SHUTDOWN_CLOSE);
        await opened.close();
      })()),
    leave: async () => {
      await stopAccepting(SERVICE_RESTART_CLOSE);
      opened.leave();
    },
  };
}
