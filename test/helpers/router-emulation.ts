/**
 * Debian's nginx configured to behave as Kubernetes agent-sandbox's
 * sandbox-router does, for the router-contract test: no cluster runs here.
 * What it emulates is the router's source (kubernetes-sigs/agent-sandbox,
 * sandbox-router/proxy/headers.go and proxy.go at commit 2fd412d5, and the
 * path routing of PR #1413/#1441, proxy/pathroute.go at eb23cb23):
 *
 * - the sandbox is `X-Sandbox-ID` (a DNS label), in `X-Sandbox-Namespace`
 *   (default `default`), on `X-Sandbox-Port` (default 8888), reached at the
 *   address its Service resolves to (here one loopback address per
 *   sandbox, as a pod has its own IP); a sandbox it cannot reach is 502;
 * - with a path routing prefix, `<prefix>/<namespace>/<id>/<port>/<rest>`
 *   routes by the path instead, and the sandbox sees `/<rest>` (escaping
 *   kept, the query kept);
 * - Host becomes the upstream's address; Authorization is removed; Origin is
 *   removed on upgrades only; X-Forwarded-For/Host/Proto are set;
 * - WebSockets pass through; responses are not buffered.
 *
 * Unlike the router, nginx applies `proxy_read_timeout` to an upgraded
 * connection too, as a load balancer in front of a router does: the test
 * uses that to show an idle connection survives such a timeout.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { connect as tcpConnect, createServer } from "node:net";
import { join } from "node:path";
import { vi } from "vitest";

export const NGINX = "/usr/sbin/nginx";

export interface EmulatedSandbox {
  readonly namespace: string;
  readonly id: string;
  /** The address its pod has (the daemon listens there on the sandbox port). */
  readonly address: string;
}

export interface RouterSettings {
  readonly sandboxes: readonly EmulatedSandbox[];
  /** The router's --path-routing-prefix, e.g. /sandboxes. */
  readonly pathRoutingPrefix: string;
  readonly readTimeoutSeconds: number;
  /**
   * Besides the router's behaviour, a plain reverse proxy at this location
   * that forwards its whole path (prefix kept), Host rewritten and Origin
   * kept, to `upstream` (host:port): what a daemon with --base-path is for.
   */
  readonly prefixKeepingProxy?: { readonly location: string; readonly upstream: string };
}

const DNS_LABEL = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$";

/** The router's validation and lookup, after $sandbox_* are set (proxy/headers.go's answers). */
const CHECKS = `
      if ($sandbox_id = "") { return 400 '{"detail":"X-Sandbox-ID header is required."}'; }
      if ($sandbox_id !~ "${DNS_LABEL}") { return 400 '{"detail":"Invalid sandbox ID format."}'; }
      if ($sandbox_namespace !~ "${DNS_LABEL}") { return 400 '{"detail":"Invalid namespace format."}'; }
      if ($sandbox_port !~ "^[0-9]{1,5}$") { return 400 '{"detail":"Invalid port format."}'; }
      if ($sandbox_address = "") { return 502 '{"detail":"Could not connect to the backend sandbox: $sandbox_id"}'; }`;

function configuration(directory: string, port: number, settings: RouterSettings): string {
  const sandboxes = settings.sandboxes.map((sandbox) => `    "${sandbox.namespace}/${sandbox.id}" ${sandbox.address};`).join("\n");
  const prefix = settings.pathRoutingPrefix;
  const keeping = settings.prefixKeepingProxy;
  return `
daemon off;
worker_processes 1;
pid ${join(directory, "nginx.pid")};
error_log ${join(directory, "error.log")} info;
${process.getuid?.() === 0 ? "user root;" : ""}
events { worker_connections 512; }
http {
  access_log ${join(directory, "access.log")};
  client_body_temp_path ${join(directory, "client-body")};
  proxy_temp_path ${join(directory, "proxy")};
  fastcgi_temp_path ${join(directory, "fastcgi")};
  uwsgi_temp_path ${join(directory, "uwsgi")};
  scgi_temp_path ${join(directory, "scgi")};
  default_type application/json;

  map $http_upgrade $connection_upgrade { default upgrade; "" close; }
  # proxy.go: Origin is dropped on upgrades only.
  map $http_upgrade $origin_to_sandbox { default ""; "" $http_origin; }
  # <id>.<namespace>.svc.<cluster domain>, resolved.
  map "$sandbox_namespace/$sandbox_id" $sandbox_address {
    volatile;
    default "";
${sandboxes}
  }

  server {
    listen 127.0.0.1:${port};
    proxy_http_version 1.1;
    proxy_buffering off;
    proxy_request_buffering off;
    proxy_read_timeout ${settings.readTimeoutSeconds}s;
    proxy_set_header Host $sandbox_address:$sandbox_port;
    proxy_set_header Authorization "";
    proxy_set_header Origin $origin_to_sandbox;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection $connection_upgrade;
    proxy_set_header X-Forwarded-For $remote_addr;
    proxy_set_header X-Forwarded-Host $http_host;
    proxy_set_header X-Forwarded-Proto $scheme;

    location = /healthz { return 200 '{"status":"ok"}'; }

    # pathroute.go: <prefix>/<namespace>/<id>/<port>/<rest>, the rest as it came (escaped).
    location ${prefix}/ {
      set $sandbox_namespace "";
      set $sandbox_id "";
      set $sandbox_port "";
      set $sandbox_path "";
      if ($request_uri ~ "^${prefix}/([^/?]*)/([^/?]*)/([^/?]*)(/[^?]*)?") {
        set $sandbox_namespace $1;
        set $sandbox_id $2;
        set $sandbox_port $3;
        set $sandbox_path $4;
      }
      if ($sandbox_path = "") { set $sandbox_path /; }
${CHECKS}
      proxy_pass http://$sandbox_address:$sandbox_port$sandbox_path$is_args$args;
    }
${
  keeping
    ? `
    location ${keeping.location}/ {
      proxy_set_header Host ${keeping.upstream};
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_pass http://${keeping.upstream};
    }`
    : ""
}
    # headers.go: X-Sandbox-ID, X-Sandbox-Namespace (default), X-Sandbox-Port (8888); the path as it came.
    location / {
      set $sandbox_id $http_x_sandbox_id;
      set $sandbox_namespace $http_x_sandbox_namespace;
      if ($sandbox_namespace = "") { set $sandbox_namespace default; }
      set $sandbox_port $http_x_sandbox_port;
      if ($sandbox_port = "") { set $sandbox_port 8888; }
${CHECKS}
      proxy_pass http://$sandbox_address:$sandbox_port;
    }
  }
}
`;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port. */
async function listening(port: number, nginx: ChildProcess, log: string): Promise<void> {
  await vi.waitFor(
    () =>
      new Promise<void>((resolve, reject) => {
        if (nginx.exitCode !== null) return reject(new Error(`nginx exited (${nginx.exitCode}); see ${log}`));
        const socket = tcpConnect(port, "127.0.0.1", () => {
          socket.destroy();
          resolve();
        });
        socket.once("error", reject);
      }),
    { timeout: 10_000, interval: 20 },
  );
}

export class NginxRouter {
  private nginx: ChildProcess | undefined;

  private constructor(
    private readonly directory: string,
    readonly port: number,
  ) {}

  /** Writes the configuration into `directory` (which must exist) and starts nginx on a free port. */
  static async start(directory: string, settings: RouterSettings): Promise<NginxRouter> {
    const port = await freePortOn(["127.0.0.1"]);
    writeFileSync(join(directory, "nginx.conf"), configuration(directory, port, settings));
    const router = new NginxRouter(directory, port);
    await router.run();
    return router;
  }

  /** ws://127.0.0.1:port: the router's address, for header routing. */
  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  private async run(): Promise<void> {
    const log = join(this.directory, "error.log");
    const nginx = spawn(NGINX, ["-p", this.directory, "-c", join(this.directory, "nginx.conf"), "-e", log], { stdio: ["ignore", "ignore", "pipe"] });
    this.nginx = nginx;
    await listening(this.port, nginx, log);
  }

  /** Fast shutdown (SIGTERM): every connection through it is cut at once. */
  async stop(): Promise<void> {
    const nginx = this.nginx;
    this.nginx = undefined;
    if (!nginx || nginx.exitCode !== null || nginx.signalCode !== null) return;
    const exited = new Promise((resolve) => nginx.once("exit", resolve));
    nginx.kill("SIGTERM");
    await exited;
  }

  /** Stops it (cutting every connection) and starts it again on the same port. */
  async restart(): Promise<void> {
    await this.stop();
    await this.run();
  }
}

/** A TCP port free on every one of `hosts` a moment ago (pods all listen on the same port, each on its own address). */
export async function freePortOn(hosts: readonly string[]): Promise<number> {
  for (;;) {
    const port = await bindAndRelease(hosts[0]!, 0);
    const others = await Promise.all(hosts.slice(1).map((host) => bindAndRelease(host, port).then(() => true, () => false)));
    if (others.every(Boolean)) return port;
  }
}

function bindAndRelease(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, host, () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : port;
      server.close(() => resolve(bound));
    });
  });
}
