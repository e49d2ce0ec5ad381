/**
 * The router contract: three execmux daemons, each as a sandbox pod runs it
 * (its own address, the same port, a key of its own, its name as the token
 * audience), behind Debian's nginx configured as Kubernetes agent-sandbox's
 * sandbox-router behaves (helpers/router-emulation.ts says what that is and
 * which router source it follows). This emulates the router's contract; it
 * is not the router. Through it: tokens are per sandbox, the SDK, the CLI,
 * the MCP server and Codex reach the sandbox they name, the SDK resumes every
 * process exactly once across an nginx restart and a daemon crash, an idle
 * connection outlives nginx's read timeout, and the console works under the
 * router's path prefix and under a proxy that keeps its prefix, in Chromium.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import type { Page } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connect, type ConnectOptions, type ExecmuxClient, type ProcessHandle, type RouterRoute } from "@execmux/client";
import type { Daemon } from "@execmux/server";
import { launchBrowser } from "./helpers/browser.js";
import { CLI, runCli } from "./helpers/cli.js";
import { runCodexAgent } from "./helpers/codex-agent.js";
import { collect, strictlyIncreasing } from "./helpers/collect.js";
import { launchTestDaemon } from "./helpers/daemon.js";
import { upgradeAttempt } from "./helpers/http.js";
import { MockModel } from "./helpers/mock-model.js";
import { freePortOn, NginxRouter, type EmulatedSandbox } from "./helpers/router-emulation.js";
import { scratchDirectory } from "./helpers/scratch.js";

const NAMESPACE = "agents";
const PREFIX = "/sandboxes";
/** nginx's proxy_read_timeout; every daemon pings more often than this. */
const READ_TIMEOUT_SECONDS = 2;
const PING_INTERVAL_MS = 500;
const SANDBOXES = [
  { namespace: NAMESPACE, id: "box-a", address: "127.0.0.11" },
  { namespace: NAMESPACE, id: "box-b", address: "127.0.0.12" },
  { namespace: NAMESPACE, id: "box-c", address: "127.0.0.13" },
] as const satisfies readonly EmulatedSandbox[];
type SandboxId = (typeof SANDBOXES)[number]["id"];
/** An upstream that answers the upgrade and then never sends a byte: what nginx's read timeout closes. */
const SILENT: EmulatedSandbox = { namespace: NAMESPACE, id: "silent", address: "127.0.0.14" };
const reconnect = { initialDelayMs: 10, maxDelayMs: 200, giveUpAfterMs: 60_000 };

/** Prints LINES numbered lines about a millisecond apart, then exits once the file GO exists. */
const PRINTER =
  '$| = 1; my ($name, $lines, $go) = @ARGV; for my $i (1 .. $lines) { print "$name line $i\\n"; select(undef, undef, undef, 0.001) } select(undef, undef, undef, 0.01) until -e $go';
const LINES = 1000;
const expected = (name: string, tty: boolean) => Array.from({ length: LINES }, (_, index) => `${name} line ${index + 1}${tty ? "\r\n" : "\n"}`).join("");

let directory: string;
let port: number;
let router: NginxRouter;
let silent: Server;
/** The sandbox daemon behind the prefix-keeping proxy, with --base-path. */
let based: Daemon;
const BASE_PATH = "/kept/box-d";
const fleetSecret = () => join(directory, "fleet.secret");
const daemons = new Map<SandboxId, SandboxDaemon>();
const tokens = new Map<SandboxId, string>();

interface SandboxDaemon {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<unknown>;
}

/** `execmux serve` as the pod runs it (deploy/agent-sandbox): its own key and audience, here on its own loopback address. */
async function startSandbox(sandbox: EmulatedSandbox): Promise<SandboxDaemon> {
  const state = join(directory, `state-${sandbox.id}`);
  mkdirSync(state, { recursive: true, mode: 0o700 });
  const args = ["--listen", `ws://${sandbox.address}:${port}`, "--log-level", "warn", "--ping-interval-ms", String(PING_INTERVAL_MS), "--state-directory", state];
  const env = {
    ...process.env,
    EXECMUX_WS_AUTH: "signed-bearer-token",
    EXECMUX_WS_SHARED_SECRET_FILE: join(directory, `${sandbox.id}.key`),
    EXECMUX_WS_AUDIENCE: sandbox.id,
    // What its commands see of where they run.
    SANDBOX_NAME: sandbox.id,
  };
  const child = spawn(process.execPath, [CLI, "serve", ...args], { env, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    void exited.then(() => reject(new Error(`the daemon of ${sandbox.id} exited before listening`)));
  });
  return { child, url, exited };
}

async function stopSandbox(daemon: SandboxDaemon | undefined): Promise<void> {
  if (!daemon || daemon.child.exitCode !== null || daemon.child.signalCode !== null) return;
  daemon.child.kill("SIGTERM");
  await daemon.exited;
}

/** Answers a WebSocket upgrade with 101, then stays silent. */
function silentUpstream(): Promise<Server> {
  const server = createServer((socket) => {
    socket.once("data", (data) => {
      const key = /sec-websocket-key: *(\S+)/i.exec(data.toString())?.[1] ?? "";
      const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    });
    socket.on("error", () => undefined);
  });
  return new Promise((resolve) => server.listen(port, SILENT.address, () => resolve(server)));
}

const route = (id: string, extra: Partial<RouterRoute> = {}): RouterRoute => ({ sandboxId: id, namespace: NAMESPACE, port, ...extra });
const through = (id: SandboxId, options: ConnectOptions = {}) => connect(router.url, { token: tokens.get(id)!, router: route(id), reconnect: false, ...options });
const routingHeaders = (id: string) => ({ "x-sandbox-id": id, "x-sandbox-namespace": NAMESPACE, "x-sandbox-port": String(port) });
const tokenProtocol = (token: string) => `execmux, execmux.bearer.${Buffer.from(token).toString("base64url")}`;

/** What `argv` prints to stdout, on `client`. */
async function printed(client: ExecmuxClient, argv: string[]): Promise<string> {
  const { data, exitCode } = await collect(await client.start({ argv }));
  expect(exitCode).toBe(0);
  return data.toString();
}

const firstOutput = (handle: ProcessHandle) => new Promise<void>((resolve) => handle.onOutput(() => resolve()));

/** Starts printers (half on a PTY) on `client`; resolves once each printed, with their results to come once GO exists. */
async function startPrinters(client: ExecmuxClient, go: string) {
  const names = Array.from({ length: 8 }, (_, index) => `p${index}`);
  const handles = await Promise.all(names.map((name, index) => client.start({ argv: ["perl", "-e", PRINTER, name, String(LINES), go], tty: index % 2 === 1 })));
  const results = handles.map(collect);
  await Promise.all(handles.map(firstOutput));
  return async () => {
    writeFileSync(go, "");
    const finished = await Promise.all(results);
    finished.forEach((result, index) => {
      const name = names[index]!;
      expect(result.exitCode, name).toBe(0);
      expect(result.data.toString(), name).toBe(expected(name, index % 2 === 1));
      expect(strictlyIncreasing(result.seqs), name).toBe(true);
    });
  };
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), "execmux-router-"));
  writeFileSync(fleetSecret(), `${randomBytes(32).toString("hex")}\n`);
  port = await freePortOn([...SANDBOXES.map((sandbox) => sandbox.address), SILENT.address]);
  for (const sandbox of SANDBOXES) {
    // What the pod's init container does, then what the platform does to give an agent its token.
    const key = await runCli(["token", "sandbox-key", "--secret-file", fleetSecret(), "--namespace", sandbox.namespace, "--sandbox", sandbox.id, "--out", join(directory, `${sandbox.id}.key`)]);
    expect(key.code, key.stderr).toBe(0);
    const minted = await runCli(["token", "mint", "--secret-file", fleetSecret(), "--namespace", sandbox.namespace, "--sandbox", sandbox.id, "--subject", "agent-7", "--ttl", "1h"]);
    expect(minted.code, minted.stderr).toBe(0);
    tokens.set(sandbox.id, minted.stdout.trim());
  }
  await Promise.all(SANDBOXES.map(async (sandbox) => daemons.set(sandbox.id, await startSandbox(sandbox))));
  silent = await silentUpstream();
  based = await launchTestDaemon({ basePath: BASE_PATH });
  router = await NginxRouter.start(directory, {
    sandboxes: [...SANDBOXES, SILENT],
    pathRoutingPrefix: PREFIX,
    readTimeoutSeconds: READ_TIMEOUT_SECONDS,
    prefixKeepingProxy: { location: "/kept", upstream: `127.0.0.1:${new URL(based.url).port}` },
  });
}, 60_000);

afterAll(async () => {
  await router?.stop();
  await Promise.all([...daemons.values()].map(stopSandbox));
  await based?.close();
  silent?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe("through a router that behaves as agent-sandbox's sandbox-router (nginx)", () => {
  it("routes by X-Sandbox-ID; a token minted for one sandbox is refused by another; Authorization and Origin never reach the daemon", async () => {
    // The router's own token rides in Authorization, which it consumes: the daemon's goes as the subprotocol.
    for (const id of ["box-a", "box-b"] as const) {
      const client = await through(id, { router: route(id, { token: "the-routers-scoped-token" }) });
      expect(await printed(client, ["printenv", "SANDBOX_NAME"])).toBe(`${id}\n`);
      client.close();
    }
    // box-a's token, routed to box-b: its key and audience are box-b's.
    await expect(connect(router.url, { token: tokens.get("box-a")!, router: route("box-b"), reconnect: false })).rejects.toThrow(/HTTP 401/);

    // A token sent as Authorization is removed on the way: the daemon saw none.
    const inAuthorization = await upgradeAttempt(router.url, { ...routingHeaders("box-a"), authorization: `Bearer ${tokens.get("box-a")}` });
    expect(inAuthorization).toMatchObject({ status: 401, body: "missing websocket bearer token" });

    // Origin is removed from upgrades: a foreign page's Origin, refused by the daemon itself, never gets there.
    const foreign = { origin: "https://elsewhere.example", "sec-websocket-protocol": tokenProtocol(tokens.get("box-a")!) };
    expect((await upgradeAttempt(daemons.get("box-a")!.url, foreign)).status).toBe(403);
    expect((await upgradeAttempt(router.url, { ...routingHeaders("box-a"), ...foreign })).status).toBe(101);
    // The token, not the Origin, is what keeps such a page out.
    expect((await upgradeAttempt(router.url, { ...routingHeaders("box-a"), origin: "https://elsewhere.example" })).status).toBe(401);

    // The router's own answers: no sandbox named, one it cannot reach.
    expect(await upgradeAttempt(router.url, {})).toMatchObject({ status: 400, body: '{"detail":"X-Sandbox-ID header is required."}' });
    expect((await upgradeAttempt(router.url, routingHeaders("box-z"))).status).toBe(502);
  });

  it("takes the CLI and the MCP server to the sandbox they name", async () => {
    const routing = ["--url", router.url, "--sandbox-id", "box-b", "--sandbox-namespace", NAMESPACE, "--sandbox-port", String(port)];
    const ran = await runCli(["exec", ...routing, "--cwd", "/", "--", "printenv", "SANDBOX_NAME"], { EXECMUX_TOKEN: tokens.get("box-b")! });
    expect(ran).toMatchObject({ code: 0, stdout: "box-b\n" });
    const refused = await runCli(["exec", ...routing, "--cwd", "/", "--", "true"], { EXECMUX_TOKEN: tokens.get("box-a")! });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("refused the token");

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", ...routing],
      env: { ...(process.env as Record<string, string>), EXECMUX_TOKEN: tokens.get("box-b")! },
      stderr: "ignore",
    });
    const mcp = new Client({ name: "router-test-agent", version: "1.0.0" });
    await mcp.connect(transport);
    try {
      const result = await mcp.callTool({ name: "exec_command", arguments: { cmd: "printenv SANDBOX_NAME", yield_time_ms: 5000, login: false } });
      expect((result.content as { text: string }[])[0]!.text).toMatch(/Process exited with code 0\nOutput:\n[\s\S]*box-b/);
    } finally {
      await mcp.close();
    }
  });

  it("lets the SDK resume every process exactly once across an nginx restart", async () => {
    const client = await through("box-a", { reconnect });
    let resumed = 0;
    client.on("resumed", () => resumed++);
    const finish = await startPrinters(client, join(scratchDirectory("router-restart"), "go"));
    await router.restart();
    await vi.waitFor(() => expect(resumed).toBeGreaterThan(0), { timeout: 30_000 });
    await finish();
    client.close();
  });

  it("lets the SDK resume every process exactly once across a crash of the daemon, started again with the same command", async () => {
    const client = await through("box-c", { reconnect });
    const finish = await startPrinters(client, join(scratchDirectory("router-crash"), "go"));
    const crashed = daemons.get("box-c")!;
    crashed.child.kill("SIGKILL");
    await crashed.exited;
    const sandbox = SANDBOXES.find((entry) => entry.id === "box-c")!;
    daemons.set("box-c", await startSandbox(sandbox));
    await finish();
    client.close();
    // New connections reach the daemon started again.
    const fresh = await through("box-c");
    expect(await printed(fresh, ["printenv", "SANDBOX_NAME"])).toBe("box-c\n");
    fresh.close();
  });

  it("keeps an idle connection open past nginx's read timeout (the daemon's pings cross it)", async () => {
    const client = await through("box-b", { reconnect });
    let disconnected = 0;
    client.on("disconnected", () => disconnected++);
    const sessionId = client.sessionId;
    // A connection opened later to an upstream that never sends: nginx closes it once the read timeout passes.
    const quiet = new WebSocket(`${router.url}/`, { headers: routingHeaders(SILENT.id) });
    await new Promise<void>((resolve, reject) => {
      quiet.once("open", resolve);
      quiet.once("error", reject);
    });
    await new Promise<void>((resolve) => quiet.once("close", () => resolve()));
    // The SDK's connection was idle as long, and is still the same one.
    expect(disconnected).toBe(0);
    expect(client.sessionId).toBe(sessionId);
    expect(await printed(client, ["echo", "still here"])).toBe("still here\n");
    expect(disconnected).toBe(0);
    client.close();
  });

  it("takes Codex to sandbox N with the URL `execmux token environments` writes for its claim", async () => {
    const claims = {
      apiVersion: "v1",
      kind: "List",
      items: [
        { metadata: { name: "task-1", namespace: NAMESPACE }, status: { sandbox: { name: "box-b" } } },
        { metadata: { name: "task-2", namespace: NAMESPACE }, status: {} },
      ],
    };
    const generated = await runCli(
      ["token", "environments", "--secret-file", fleetSecret(), "--router", `${router.url}${PREFIX}`, "--port", String(port), "--subject", "codex-user", "--default", "task-1", "--no-local"],
      {},
      JSON.stringify(claims),
    );
    expect(generated.code, generated.stderr).toBe(0);
    expect(generated.stderr).toContain(`skipped ${NAMESPACE}/task-2: not bound`);
    expect(generated.stdout).toContain(`url = "${router.url}${PREFIX}/${NAMESPACE}/box-b/${port}/?token=`);

    const project = scratchDirectory("router-codex-project");
    const model = await MockModel.start([
      () => ({ calls: [{ name: "exec_command", arguments: { cmd: "printenv SANDBOX_NAME" } }] }),
      () => ({ message: "ran it in the sandbox" }),
    ]);
    const run = await runCodexAgent({ environmentsToml: generated.stdout, modelBaseUrl: model.baseUrl, projectDir: project, prompt: "Run the scripted steps." });
    expect(model.failures, run.stderr).toEqual([]);
    expect(run, run.stderr).toMatchObject({ exitCode: 0, timedOut: false });
    expect(model.toolResults[0]!.output).toContain("Process exited with code 0");
    expect(model.toolResults[0]!.output).toContain("box-b");
  });

  describe("the console, in Chromium", () => {
    /** Types a command line into the console's active terminal and presses Enter. */
    async function typeLine(page: Page, line: string): Promise<void> {
      await page.locator(".terminal-pane.active .xterm-helper-textarea").focus();
      await page.keyboard.type(line);
      await page.keyboard.press("Enter");
    }
    const activeText = (page: Page) =>
      page.evaluate(() => (window as unknown as { execmuxConsole: { tabs: { text(): string }[] } }).execmuxConsole.tabs.at(-1)!.text());

    it("works under the router's path prefix, asking for the sandbox's token", async () => {
      const page = await (await launchBrowser()).newPage();
      // Without the trailing slash: the daemon's relative redirect keeps the prefix.
      await page.goto(`http://127.0.0.1:${router.port}${PREFIX}/${NAMESPACE}/box-a/${port}/console`);
      // The token form asks (its health check through the router found the daemon there).
      await page.locator("#gate input[name=token]").fill(tokens.get("box-a")!);
      expect(await page.locator("#gate h1").textContent()).toBe("This daemon needs a token");
      await page.click("#gate-connect");
      await page.locator("#status.connected").waitFor();
      expect(page.url()).toBe(`http://127.0.0.1:${router.port}${PREFIX}/${NAMESPACE}/box-a/${port}/console/`);
      await expect.poll(() => page.locator(".tab").count()).toBe(1);
      await typeLine(page, "echo $SANDBOX_NAME-$((40+2))");
      await expect.poll(() => activeText(page), { timeout: 20_000 }).toMatch(/^box-a-42$/m);
    });

    it("works under a proxy that keeps its prefix, with the daemon's --base-path, the page's Origin checked against the forwarded host", async () => {
      const proxied = `http://127.0.0.1:${router.port}${BASE_PATH}`;
      // That proxy keeps Origin: a foreign one is still refused, the page's own passes although Host was rewritten.
      expect((await upgradeAttempt(router.url, { origin: "http://elsewhere.example" }, `${BASE_PATH}/`)).status).toBe(403);
      expect((await upgradeAttempt(router.url, { origin: `http://127.0.0.1:${router.port}` }, `${BASE_PATH}/`)).status).toBe(101);
      expect((await upgradeAttempt(based.url, {}, "/")).status).toBe(404);

      const page = await (await launchBrowser()).newPage();
      await page.goto(`${proxied}/console/`);
      await page.locator("#status.connected").waitFor();
      await expect.poll(() => page.locator(".tab").count()).toBe(1);
      await typeLine(page, "echo based-$((2+3))");
      await expect.poll(() => activeText(page), { timeout: 20_000 }).toMatch(/^based-5$/m);
    });
  });
});
