/**
 * One executor-local proxy per process/start that asks for one (upstream
 * starts one per launch too): an HTTP/CONNECT front and, unless the policy
 * turns it off, a SOCKS5 front, both deciding through one gate.
 *
 * Unsandboxed, the fronts listen on 127.0.0.1 ephemeral ports, as
 * upstream's do; the process could go around them, as it can upstream.
 * Sandboxed, the process has a network namespace of its own with nothing
 * but loopback: the fronts listen on unix sockets in a directory of this
 * process's own, which the sandbox binds in, and a relay inside (relay.ts)
 * listens on the ports the environment names and carries each connection
 * to its socket. The sockets live under the daemon's state directory, which
 * every sandbox hides, so no process reaches another one's proxy.
 *
 * Budgets: connections at once, per process and daemon-wide; each
 * connection holds at most two stream buffers (Node's pipe backpressure),
 * so bytes in flight are bounded by the connection budget.
 */
import { randomBytes, randomInt } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { RELAY_FILE, RELAY_SCRIPT } from "../sandbox/network-relay.js";
import type { CredentialBroker } from "./credential-broker.js";
import { Gate, type Decider, type DecisionRecord } from "./gate.js";
import { CLIENT_ADDRESS, HttpFront, TARGET_ADDRESS } from "./http-front.js";
import type { NetworkPolicy } from "./policy.js";
import { proxyEnvironment } from "./proxy-env.js";
import { SocksFront } from "./socks-front.js";
import { TransparentFront } from "./transparent-front.js";

/** Proxied connections open at once for one process. */
export const PROCESS_MAX_CONNECTIONS = 256;
/** Proxied connections open at once in the whole daemon. */
export const DAEMON_MAX_CONNECTIONS = 2048;
let daemonConnections = 0;

/** The relay's first line on each bridged connection names the client inside the sandbox (`address:port`). */
const PREAMBLE_MAX_BYTES = 400;

export interface BridgeRoute {
  /** The loopback port inside the sandbox the environment names. */
  readonly port: number;
  /** The daemon's unix socket for it. */
  readonly socket: string;
}

export interface ProxyBridge {
  readonly directory: string;
  readonly relayScript: string;
  readonly routes: readonly BridgeRoute[];
  /** Transparent TCP: the relay's redirect port, the daemon's socket for it, and its resolver's port. */
  readonly transparent?: { readonly tcpPort: number; readonly socket: string; readonly dnsPort: number } | undefined;
}

export interface NetworkProxyLaunch {
  /** Variables to lay over the process's environment. */
  readonly env: Record<string, string>;
  /** Variables to set where the process has none (a CA bundle variable upstream keeps when it is set). */
  readonly defaults: Record<string, string>;
  /** For a sandboxed process: the directory to bind in, the relay's script there, and its routes. */
  readonly bridge?: ProxyBridge;
  /** Stops the fronts and every connection they carry. */
  close(): void;
}

export interface LaunchOptions {
  readonly policy: NetworkPolicy;
  readonly enableSocks5: boolean;
  readonly allowLocalBinding: boolean;
  /** Every TCP connection of the (sandboxed) process goes through the proxy, not only those that ask it. */
  readonly transparentTcp?: boolean;
  /** Where a sandboxed process's sockets go (a directory no sandbox sees); absent: unsandboxed. */
  readonly socketParent?: string | undefined;
  readonly report: (record: DecisionRecord) => void;
  readonly decider?: Decider | undefined;
  readonly protectedPorts: () => ReadonlySet<number>;
  /**
   * Credential masking: the broker holding the real values (absent when the
   * argv is not one upstream masks for: the CA bundle is still handed out),
   * and where to write the bundle when there is no sandbox directory.
   */
  readonly masking?: { readonly broker: CredentialBroker | undefined; readonly bundleParent: string } | undefined;
}

/** Every variable upstream points at the CA bundle of a masking proxy. */
const CA_BUNDLE_KEYS = [
  "SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT", "NPM_CONFIG_CAFILE",
  "npm_config_cafile", "BUNDLE_SSL_CA_CERT", "CARGO_HTTP_CAINFO", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "DENO_CERT", "CODEX_CA_CERTIFICATE",
];

const KEPT_CA_KEY = "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE";

/** Writes the trust bundle (system roots, SSL_CERT_FILE, the proxy's CA: never its key) into `directory`; returns the variables naming it. */
async function caBundleEnvironment(directory: string): Promise<{ env: Record<string, string>; defaults: Record<string, string> }> {
  const { mitmAuthority, trustBundle } = await import("./mitm-ca.js");
  const path = join(directory, "ca-bundle.pem");
  writeFileSync(path, trustBundle((await mitmAuthority()).certificatePem), { mode: 0o444 });
  // Upstream 0.171 replaces each of them, but keeps a CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE the process inherits (measured).
  const named = (keep: boolean) => Object.fromEntries(CA_BUNDLE_KEYS.filter((key) => (key === KEPT_CA_KEY) === keep).map((key) => [key, path]));
  return { env: named(false), defaults: named(true) };
}

export async function launchNetworkProxy(options: LaunchOptions): Promise<NetworkProxyLaunch> {
  const gate = new Gate({ policy: options.policy, decider: options.decider, report: options.report, protectedPorts: options.protectedPorts });
  const broker = options.masking?.broker;
  const http = new HttpFront(gate, broker ? { broker } : undefined);
  const socks = options.enableSocks5 ? new SocksFront(gate) : undefined;
  const transparent = options.transparentTcp && options.socketParent ? new TransparentFront(gate) : undefined;
  const servers: Server[] = [];
  const open = new Set<Socket>();
  let closed = false;

  const admit = (front: { accept(socket: Socket): void }, bridged: boolean) => (socket: Socket) => {
    if (closed || open.size >= PROCESS_MAX_CONNECTIONS || daemonConnections >= DAEMON_MAX_CONNECTIONS) {
      socket.destroy();
      return;
    }
    open.add(socket);
    daemonConnections++;
    socket.once("close", () => {
      open.delete(socket);
      daemonConnections--;
    });
    socket.on("error", () => socket.destroy());
    if (bridged) readPreamble(socket, () => front.accept(socket));
    else front.accept(socket);
  };

  const directory = options.socketParent ? join(options.socketParent, randomBytes(8).toString("hex")) : undefined;
  // Unsandboxed, the bundle needs a directory of its own, readable by the process.
  const bundleDirectory = options.masking ? (directory ?? join(options.masking.bundleParent, randomBytes(8).toString("hex"))) : undefined;
  try {
    if (directory) {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      writeFileSync(join(directory, RELAY_FILE), RELAY_SCRIPT, { mode: 0o400 });
    }
    if (bundleDirectory && bundleDirectory !== directory) mkdirSync(bundleDirectory, { recursive: true, mode: 0o755 });
    const ca = bundleDirectory ? await caBundleEnvironment(bundleDirectory) : { env: {}, defaults: {} };
    const listen = async (front: { accept(socket: Socket): void }, name: string) => {
      const server = createServer({ pauseOnConnect: false }, admit(front, directory !== undefined));
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        if (directory) server.listen(join(directory, name), resolve);
        else server.listen(0, "127.0.0.1", resolve);
      });
      return directory ? join(directory, name) : (server.address() as AddressInfo).port;
    };
    const httpEndpoint = await listen(http, "http.sock");
    const socksEndpoint = socks ? await listen(socks, "socks.sock") : undefined;
    const transparentEndpoint = transparent ? await listen(transparent, "tcp.sock") : undefined;
    const close = () => {
      if (closed) return;
      closed = true;
      for (const server of servers) server.close();
      http.close();
      socks?.close();
      transparent?.close();
      for (const socket of open) socket.destroy();
      if (directory) rmSync(directory, { recursive: true, force: true });
      if (bundleDirectory) rmSync(bundleDirectory, { recursive: true, force: true });
    };
    if (!directory) {
      const env = proxyEnvironment({ httpPort: httpEndpoint as number, socksPort: socksEndpoint as number | undefined, allowLocalBinding: options.allowLocalBinding });
      return { env: { ...env, ...ca.env }, defaults: ca.defaults, close };
    }
    // Inside the namespace nothing else listens yet: any two ports will do.
    const httpPort = randomInt(20000, 30000);
    const socksPort = socks ? randomInt(30000, 40000) : undefined;
    const routes: BridgeRoute[] = [{ port: httpPort, socket: httpEndpoint as string }];
    if (socksPort !== undefined) routes.push({ port: socksPort, socket: socksEndpoint as string });
    const bridge: ProxyBridge = {
      directory,
      relayScript: join(directory, RELAY_FILE),
      routes,
      transparent: transparentEndpoint
        ? { tcpPort: randomInt(40000, 50000), socket: transparentEndpoint as string, dnsPort: randomInt(50000, 60000) }
        : undefined,
    };
    return { env: { ...proxyEnvironment({ httpPort, socksPort, allowLocalBinding: options.allowLocalBinding }), ...ca.env }, defaults: ca.defaults, bridge, close };
  } catch (error) {
    for (const server of servers) server.close();
    if (directory) rmSync(directory, { recursive: true, force: true });
    if (bundleDirectory) rmSync(bundleDirectory, { recursive: true, force: true });
    throw error;
  }
}

/** Reads the relay's `address:port[ target]\n` line, then hands the rest of the stream on. */
function readPreamble(socket: Socket & { [CLIENT_ADDRESS]?: string; [TARGET_ADDRESS]?: string }, next: () => void): void {
  let seen = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const end = seen.indexOf(10);
    if (end < 0) {
      if (seen.length > PREAMBLE_MAX_BYTES) socket.destroy();
      return;
    }
    socket.off("data", onData);
    socket.pause();
    const [client = "", target] = seen.subarray(0, end).toString("latin1").split(" ");
    socket[CLIENT_ADDRESS] = /^[0-9a-f.:]{1,60}$/i.test(client) ? client : "127.0.0.1:0";
    if (target !== undefined) socket[TARGET_ADDRESS] = target;
    const rest = seen.subarray(end + 1);
    if (rest.length > 0) socket.unshift(rest);
    // Paused until the front is ready for the bytes that follow (each resumes it).
    next();
  };
  socket.on("data", onData);
}
