/**
 * `execmux serve --listen stdio`: the daemon for one client that started it
 * (`ssh host execmux serve --listen stdio`, or Codex's environments.toml
 * `program`/`args`), speaking newline-delimited JSON on stdin and stdout as
 * upstream's `codex exec-server --listen stdio` does. Logs go to stderr;
 * stdout carries nothing but protocol messages (no URL line).
 *
 * The session lives as long as the pipe. When stdin ends (the parent exited,
 * the ssh connection dropped), every request already read gets its reply,
 * then the connection closes, every process is terminated and the daemon
 * exits, as upstream's does: nothing is left behind, and there is no one to
 * resume the session.
 */
import type { LaunchedHost } from "./host/host-launch.js";
import type { Readable, Writable } from "node:stream";
import type { Logger } from "./logger.js";
import { wsAuthSettings } from "./auth/ws-auth.js";
import { ConfigError, type Config } from "./config.js";
import { createLogger } from "./logger.js";
import { Connection } from "./rpc/connection.js";
import { openRuntime } from "./runtime.js";
import type { SessionRegistry } from "./session/session-registry.js";
import { StdioTransport } from "./transport/stdio-transport.js";

export interface StdioDaemon {
  readonly log: Logger;
  readonly registry: SessionRegistry;
  /** Resolves once the connection is over: stdin ended and the replies went out, or stdout is gone. */
  readonly ended: Promise<void>;
  /** Closes the connection, terminates every process tree, stops the spawner. */
  close(): Promise<void>;
}

/**
 * Options that protect a listening socket have nothing to protect on stdio:
 * whoever can write to stdin started the daemon. Refused rather than ignored,
 * so nobody believes a token guards a daemon it does not.
 */
function refuseListenerOptions(config: Config): void {
  // Upstream's check and words; its flags are checked first, as upstream does.
  if (wsAuthSettings(config)) throw new ConfigError("WebSocket auth requires a WebSocket listener, not stdio");
  const given = (
    [
      ["--token", config.token],
      ["--token-file", config.tokenFile],
      ["--tls-cert", config.tlsCert],
      ["--tls-key", config.tlsKey],
    ] as const
  ).filter(([, value]) => value !== "");
  if (given.length > 0) {
    const names = given.map(([flag]) => flag).join(", ");
    throw new ConfigError(`${names} cannot apply to --listen stdio: there is no listener to protect (the peer is whoever started the daemon)`);
  }
}

/** `launched`: the private process host `execmux serve` already started (else it is started here). */
export async function startStdioDaemon(
  config: Config,
  launched?: Promise<LaunchedHost>,
  io: { input: Readable; output: Writable } = { input: process.stdin, output: process.stdout },
): Promise<StdioDaemon> {
  refuseListenerOptions(config);
  const log = createLogger(config);
  // Nobody could resume this session: the process host ends with the daemon.
  const runtime = await openRuntime(config, log, false, launched);

  const transport = new StdioTransport(io.input, io.output, config.maxMessageBytes);
  const ended = new Promise<void>((resolve) => transport.onClose(resolve));
  // The pipe tells when the peer is gone: an idle timeout would only end a
  // session that nobody could resume.
  const deps = runtime.connectionDeps(log);
  new Connection(transport, { ...deps, config: { ...config, idleTimeoutMs: 0 } }, { transport: "stdio" });
  log.info({ maxMessageBytes: config.maxMessageBytes }, "speaking JSON-RPC on stdin and stdout");

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      transport.close();
      await runtime.close();
    })());
  return { log, registry: runtime.registry, ended, close };
}
