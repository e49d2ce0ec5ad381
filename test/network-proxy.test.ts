/**
 * The executor-local proxy as an attacker inside the sandbox sees it, against
 * `execmux serve` as users run it (daemon and process host): the policy can
 * allow loopback and local binding, and the daemon's own port still stays out
 * of reach (issue #34); another process's proxy is out of sight; a process
 * whose output is closed leaves no proxy behind; the relay keeps exit codes
 * and signals as they were; the connection budget holds and recovers.
 */
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { codexSandbox } from "@execmux/shared";
import { afterEach, describe, expect, it, vi } from "vitest";
import { launchNetworkProxy, PROCESS_MAX_CONNECTIONS } from "../server/dist/network-proxy/launch.js";
import { NetworkPolicy } from "../server/dist/network-proxy/policy.js";
import { spawnDaemon } from "./helpers/cli.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";
import { codexProxy } from "./helpers/exec-server-frames.js";

const PROXY = { ...codexProxy({ "127.0.0.1": "allow", localhost: "allow" }), enableSocks5Udp: false, allowLocalBinding: true };

const targets: Server[] = [];
afterEach(() => {
  for (const target of targets.splice(0)) target.close();
});

async function loopbackTarget(): Promise<string> {
  const target = createServer((_request, response) => response.end("target reached\n"));
  targets.push(target);
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
}

interface Setup {
  readonly client: WireClient;
  readonly url: string;
  readonly daemonPort: number;
  readonly project: string;
  readonly stateDirectory: string;
}

async function setUp(): Promise<Setup> {
  const stateDirectory = scratchDirectory("netproxy-state");
  const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn", "--state-directory", stateDirectory], {
    HOME: scratchDirectory("netproxy-home"),
  });
  const client = await WireClient.ready(daemon.url);
  return { client, url: daemon.url, daemonPort: Number(new URL(daemon.url).port), project: realpathSync(scratchDirectory("netproxy-project")), stateDirectory };
}

/** A sandboxed (workspace-write, network through the proxy) `sh -c script`; resolves with its output once closed. */
async function runProxied(
  setup: Setup,
  processId: string,
  script: string,
  proxy: Record<string, unknown> = {},
  tty = false,
): Promise<{ output: string; exitCode: unknown }> {
  const sandbox = codexSandbox("workspace-write", setup.project);
  const started = await setup.client.request("process/start", {
    processId,
    tty,
    argv: ["/bin/sh", "-c", script],
    cwd: setup.project,
    env: { PATH: "/usr/bin:/bin" },
    sandbox: { ...sandbox, permissions: { ...sandbox.permissions, network: "enabled" } },
    enforceManagedNetwork: true,
    networkProxy: { proxy: { ...PROXY, ...proxy } },
  });
  expect(started.error, JSON.stringify(started.error)).toBeUndefined();
  expect(started.result).toMatchObject({ sandboxType: "linuxSeccomp" });
  await setup.client.closedOf(processId);
  const exited = setup.client.notifications(processId).find((message) => message.method === "process/exited");
  return { output: setup.client.output(processId), exitCode: exited?.params?.exitCode };
}

describe("the executor-local proxy of a sandboxed process", () => {
  it("reaches what the policy allows on loopback, but never the daemon's own port", async () => {
    const setup = await setUp();
    const target = await loopbackTarget();
    const daemon = `127.0.0.1:${setup.daemonPort}`;
    const { output } = await runProxied(
      setup,
      "escape",
      [
        // --noproxy '': through the proxy even where NO_PROXY (local binding allowed) would go direct.
        `curl -s -m 10 --noproxy '' -x "$HTTP_PROXY" ${target}/ ; echo "target $?"`,
        // The daemon's health endpoint and its WebSocket, by every way the proxy offers.
        `curl -s -m 10 -o /dev/null -w '%{http_code}' --noproxy '' -x "$HTTP_PROXY" http://${daemon}/readyz; echo " http"`,
        `curl -s -m 10 -o /dev/null -w '%{http_code}' --noproxy '' -x "$HTTP_PROXY" http://localhost:${setup.daemonPort}/readyz; echo " localhost"`,
        `curl -s -m 10 -o /dev/null -w '%{http_connect}' --noproxy '' -p -x "$HTTP_PROXY" http://${daemon}/readyz; echo " connect"`,
        `curl -s -m 10 -o /dev/null --noproxy '' -x "$ALL_PROXY" http://${daemon}/readyz; echo "socks $?"`,
        `curl -s -m 10 -o /dev/null --noproxy '' -x "$ALL_PROXY" "http://[::ffff:127.0.0.1]:${setup.daemonPort}/readyz"; echo "socks-mapped $?"`,
        // And around the proxy: nothing but the sandbox's own loopback.
        `curl -s -m 10 -o /dev/null --noproxy '*' http://${daemon}/readyz; echo "direct $?"`,
      ].join("; "),
    );
    expect(output).toContain("target reached\ntarget 0");
    expect(output).toContain("403 http");
    expect(output).toContain("403 localhost");
    expect(output).toContain("403 connect");
    // curl's 97: the SOCKS5 server refused the connection.
    expect(output).toContain("socks 97");
    expect(output).toContain("socks-mapped 97");
    expect(output).toContain("direct 7");
    const decisions = setup.client.messages.filter((message) => message.method === "network/policyDecision");
    expect(decisions.filter((message) => message.params?.port === setup.daemonPort).map((message) => message.params?.decision)).toEqual(
      Array(5).fill("deny"),
    );
  });

  it("sees its own proxy only, and leaves nothing behind once closed", async () => {
    const setup = await setUp();
    const proxies = join(setup.stateDirectory, "network-proxy");
    // Two proxied processes at once: each one's view of the proxies' directory holds its own socket directory only.
    const [first, second] = await Promise.all([
      runProxied(setup, "first", `ls ${proxies}; sleep 1`),
      runProxied(setup, "second", `ls ${proxies}; sleep 1`),
    ]);
    const own = (output: string) => output.trim().split("\n").filter(Boolean);
    expect(own(first.output)).toHaveLength(1);
    expect(own(second.output)).toHaveLength(1);
    expect(own(first.output)).not.toEqual(own(second.output));
    // Closed processes: their sockets and directories are gone.
    expect(existsSync(proxies) ? readdirSync(proxies) : []).toEqual([]);
  });

  it("keeps the program's exit code and signal death, and its terminal", async () => {
    const setup = await setUp();
    expect((await runProxied(setup, "code", "exit 7")).exitCode).toBe(7);
    expect((await runProxied(setup, "signal", "kill -TERM $$")).exitCode).toBe(143);
    // bwrap shows the terminal as /dev/console in a fresh /dev, with or without the relay.
    const { output, exitCode } = await runProxied(setup, "pty", 'test -t 0 && test -t 1 && echo "on a terminal"; echo "$HTTP_PROXY"', {}, true);
    expect(output).toContain("on a terminal");
    expect(output).toMatch(/http:\/\/127\.0\.0\.1:\d+/);
    expect(exitCode).toBe(0);
  });
});

describe("domain review when the client goes away", () => {
  it("denies the waiting connection at once, and a new client can go on", async () => {
    const setup = await setUp();
    const target = await loopbackTarget();
    const started = await setup.client.request("process/start", {
      processId: "reviewed",
      argv: ["/bin/sh", "-c", `curl -s -m 30 --noproxy '' -x "$HTTP_PROXY" -o /dev/null -w '%{http_code}' ${target}/; echo " reviewed"`],
      cwd: setup.project,
      env: { PATH: "/usr/bin:/bin" },
      // A review the client never answers would hold the connection for a minute.
      networkProxy: { proxy: { ...PROXY, domains: {}, allowLocalBinding: true }, policyDecisionTimeoutMs: 60_000 },
    });
    expect(started.error).toBeUndefined();
    const asked = await setup.client.next((message) => message.method === "network/policyRequest");
    expect(asked.params).toMatchObject({ processId: "reviewed", request: { protocol: "http", host: "127.0.0.1" } });
    const sessionId = (setup.client.messages.find((message) => message.result?.sessionId)?.result?.sessionId as string) ?? "";
    setup.client.close();
    await setup.client.closed;
    // The same session from a new connection: the denied request's output is there.
    const again = await WireClient.connect(setup.url);
    // Once the daemon has seen the old connection go (until then the session is still attached to it).
    await vi.waitFor(async () => expect((await again.request("initialize", { clientName: "conformance", resumeSessionId: sessionId })).error).toBeUndefined());
    again.send({ method: "initialized", params: {} });
    await vi.waitFor(
      async () => {
        const read = await again.call<{ chunks: { chunk: string }[]; closed: boolean }>("process/read", { processId: "reviewed", afterSeq: 0 });
        expect(read.closed).toBe(true);
        expect(read.chunks.map(({ chunk }) => Buffer.from(chunk, "base64").toString()).join("")).toBe("403 reviewed\n");
      },
      { timeout: 10_000 },
    );
  });
});

describe("the proxy's connection budget", () => {
  it("refuses connections past the per-process budget and serves again once they close", async () => {
    const proxy = await launchNetworkProxy({
      policy: NetworkPolicy.from({ ...PROXY, domains: { "127.0.0.1": "allow" } } as never),
      enableSocks5: false,
      allowLocalBinding: false,
      protectedPorts: () => new Set(),
      report: () => undefined,
    });
    try {
      const port = Number(/:(\d+)$/.exec(proxy.env.HTTP_PROXY!)![1]);
      const target = await loopbackTarget();
      const sockets = await Promise.all(
        Array.from({ length: PROCESS_MAX_CONNECTIONS + 20 }, () => {
          // Each asks for a tunnel: an admitted one is answered and stays open, a refused one closes unanswered.
          const socket = connect(port, "127.0.0.1", () => socket.write(`CONNECT ${new URL(target).host} HTTP/1.1\r\nhost: ${new URL(target).host}\r\n\r\n`));
          return new Promise<{ socket: Socket; refused: boolean }>((resolve) => {
            socket.once("data", () => resolve({ socket, refused: false }));
            socket.once("close", () => resolve({ socket, refused: true }));
            socket.on("error", () => undefined);
          });
        }),
      );
      expect(sockets.filter(({ refused }) => refused)).toHaveLength(20);
      for (const { socket } of sockets) socket.destroy();
      await vi.waitFor(async () => {
        const answer = await fetchThrough(port, `${target}/`);
        expect(answer).toContain("target reached");
      });
    } finally {
      proxy.close();
    }
  });
});

/** An absolute-form GET through the proxy at `port`, answered as text. */
function fetchThrough(port: number, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(`GET ${url} HTTP/1.1\r\nhost: ${new URL(url).host}\r\nconnection: close\r\n\r\n`));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
    socket.once("close", () => resolve(text));
    socket.once("error", reject);
  });
}
