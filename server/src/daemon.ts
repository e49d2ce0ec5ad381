/**
 * The daemon: a Fastify server whose `GET /` upgrades to the JSON-RPC
 * WebSocket, a registry of sessions, and an orderly shutdown that leaves no
 * process behind.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import websocket from "@fastify/websocket";
import type { Config } from "./config.js";
import { parseListen } from "./config.js";
import { Metrics } from "./metrics.js";
import { Connection } from "./rpc/connection.js";
import { Spawner } from "./spawner/spawner.js";
import { SessionRegistry } from "./session/session-registry.js";

export interface Daemon {
  /** ws://HOST:PORT with the port actually bound. */
  readonly url: string;
  readonly port: number;
  readonly registry: SessionRegistry;
  readonly log: FastifyBaseLogger;
  readonly metrics: Metrics;
  /** Stops accepting, closes every socket, terminates every process tree. */
  close(): Promise<void>;
}

/** How often shutdown checks whether every process has exited after SIGTERM. */
const SHUTDOWN_POLL_MS = 10;

export async function startDaemon(config: Config): Promise<Daemon> {
  const { host, port } = parseListen(config.listen);
  const app: FastifyInstance = Fastify({
    logger: { level: config.logLevel, stream: process.stderr },
  });
  const metrics = new Metrics();
  // Started first, while the daemon is small: every child is forked from it.
  const spawner = new Spawner();
  const registry = new SessionRegistry({
    detachedSessionTtlMs: config.sessionTtlMs,
    closedRetentionMs: config.closedRetentionMs,
    metrics,
  });

  await app.register(websocket, { options: { maxPayload: config.maxMessageBytes } });

  app.route({
    method: "GET",
    url: "/",
    handler: (_request, reply) =>
      reply.type("text/plain").send("execmux daemon: open a WebSocket on this URL and speak JSON-RPC (see README).\n"),
    wsHandler: (socket, request) => {
      request.log.info({ remote: request.socket.remoteAddress }, "connection opened");
      metrics.connections.inc();
      socket.once("close", (code) => {
        metrics.connections.dec();
        request.log.info({ code }, "connection closed");
      });
      new Connection(socket, { registry, config, log: request.log, metrics, spawner });
    },
  });
  app.get("/livez", async () => ({ status: "ok" }));
  app.get("/readyz", async () => ({ status: "ready" }));
  app.get("/metrics", async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

  await app.listen({ host, port });
  const address = app.server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      await terminateEverything(registry, config.killGraceMs);
      spawner.stop();
    })());

  return { url: `ws://${urlHost}:${boundPort}`, port: boundPort, registry, log: app.log, metrics, close };
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
