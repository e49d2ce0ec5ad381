/** Who gets in: tokens, origins, safe defaults, TLS, session isolation. */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { connect, ErrorCode, RpcRequestError } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";
import { handshake, httpUrl, metric } from "./helpers/http.js";
import { runCli, spawnDaemon } from "./helpers/cli.js";
import { WireClient } from "./helpers/wire-client.js";
import { scratchDirectory } from "./helpers/scratch.js";

const TOKEN = "s3cret-token-value";
const base64url = (text: string) => Buffer.from(text).toString("base64url");

describe("bearer tokens", () => {
  it("refuses an upgrade without the right token with 401 and accepts all three transports", async () => {
    const daemon = await startTestDaemon({ token: TOKEN });
    expect((await handshake(daemon.url)).status).toBe(401);
    expect((await handshake(daemon.url, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await handshake(daemon.url, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(101);
    // Browsers: the token as a subprotocol next to "execmux"; the answer never echoes the token.
    const viaProtocol = await handshake(daemon.url, { protocols: ["execmux", `execmux.bearer.${base64url(TOKEN)}`] });
    expect(viaProtocol).toEqual({ status: 101, protocol: "execmux" });
    expect((await handshake(`${daemon.url}/?token=${TOKEN}`)).status).toBe(101);
    expect((await handshake(`${daemon.url}/?token=nope`)).status).toBe(401);
  });

  it("keeps /livez and /readyz open and /metrics behind the token", async () => {
    const daemon = await startTestDaemon({ token: TOKEN });
    const base = httpUrl(daemon.url);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const refused = await fetch(`${base}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it("lets the SDK authenticate, and says clearly when the token is refused", async () => {
    const daemon = await startTestDaemon({ token: TOKEN });
    const client = await connect(daemon.url, { token: TOKEN });
    const handle = await client.start({ argv: ["true"] });
    expect(await handle.wait()).toBe(0);
    client.close();
    await expect(connect(daemon.url, { token: "wrong" })).rejects.toThrow(/refused the token \(HTTP 401\)/);
  });

  it("rotates tokens from a file on SIGHUP and when the file changes", async () => {
    const file = join(scratchDirectory("tokens"), "tokens");
    writeFileSync(file, "# current tokens\nfirst-token\nsecond-token\n");
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--token-file", file]);
    const ok = (token: string) => handshake(daemon.url, { headers: { authorization: `Bearer ${token}` } }).then((result) => result.status);
    expect(await ok("first-token")).toBe(101);
    expect(await ok("second-token")).toBe(101);

    writeFileSync(file, "third-token\n");
    daemon.child.kill("SIGHUP");
    await vi.waitFor(async () => expect(await ok("third-token")).toBe(101));
    expect(await ok("first-token")).toBe(401);

    // A change to the file alone is picked up too.
    writeFileSync(file, "fourth-token\n");
    await vi.waitFor(async () => expect(await ok("fourth-token")).toBe(101), { timeout: 10_000 });
    expect(await ok("third-token")).toBe(401);
    daemon.child.kill("SIGTERM");
    await daemon.exited;
  });

  it("never writes a token into a log line", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--token", TOKEN, "--log-level", "trace"]);
    await handshake(`${daemon.url}/?token=${TOKEN}`);
    await handshake(`${daemon.url}/?token=wrong-guess-123`);
    await handshake(daemon.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    await handshake(daemon.url, { protocols: ["execmux", `execmux.bearer.${base64url(TOKEN)}`] });
    daemon.child.kill("SIGTERM");
    await daemon.exited;
    const logs = daemon.stderr();
    expect(logs).toContain("invalid websocket bearer token");
    for (const secret of [TOKEN, "wrong-guess-123", base64url(TOKEN)]) expect(logs).not.toContain(secret);
  });
});

describe("origins", () => {
  it("refuses a foreign browser Origin with 403 and accepts allowed, same-origin and non-browser clients", async () => {
    const daemon = await startTestDaemon({ allowedOrigins: "https://console.example.com" });
    expect((await handshake(daemon.url, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect((await handshake(daemon.url, { headers: { origin: "https://console.example.com" } })).status).toBe(101);
    expect((await handshake(daemon.url, { headers: { origin: httpUrl(daemon.url) } })).status).toBe(101);
    expect((await handshake(daemon.url)).status).toBe(101);
  });
});

describe("safe defaults", () => {
  it("refuses to listen beyond loopback without a token, unless told it is insecure on purpose", async () => {
    const refused = await runCli(["serve", "--listen", "ws://0.0.0.0:0"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refusing to listen on 0\.0\.0\.0 without a token/);
    // The way out it names keeps the token off the command line.
    expect(refused.stderr).toMatch(/--token-file FILE or EXECMUX_TOKEN \(not --token:/);
    // A token file it cannot read is refused at the start, not a daemon that turns every client away.
    const unreadable = await runCli(["serve", "--listen", "ws://127.0.0.1:0", "--token-file", "/nonexistent/execmux-tokens"]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(/cannot read --token-file \/nonexistent\/execmux-tokens \(ENOENT\): no token in it could admit a client/);

    const loud = await spawnDaemon(["--listen", "ws://0.0.0.0:0", "--insecure-no-auth"]);
    expect(loud.url).toMatch(/^ws:\/\/0\.0\.0\.0:\d+$/);
    loud.child.kill("SIGTERM");
    await loud.exited;
    expect(loud.stderr()).toMatch(/INSECURE/);

    const withToken = await spawnDaemon(["--listen", "ws://0.0.0.0:0"], { EXECMUX_TOKEN: TOKEN });
    withToken.child.kill("SIGTERM");
    expect((await withToken.exited).code).toBe(0);
  });

  it("serves wss:// with --tls-cert and --tls-key", async () => {
    const directory = scratchDirectory("tls");
    const [cert, key] = [join(directory, "cert.pem"), join(directory, "key.pem")];
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"], { stdio: "ignore" });
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--tls-cert", cert, "--tls-key", key]);
    expect(daemon.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/);
    expect((await handshake(daemon.url)).status).toBe(101);
    daemon.child.kill("SIGTERM");
    await daemon.exited;
  });
});

describe("session isolation", () => {
  it("does not let one session see, read, write or signal another's processes", async () => {
    const daemon = await startTestDaemon();
    const alice = await connect(daemon.url);
    const mallory = await WireClient.ready(daemon.url);
    await alice.start({ processId: "private", argv: ["sleep", "30"] });
    expect(await mallory.call("process/list", {})).toEqual({ processes: [] });
    expect((await mallory.request("process/read", { processId: "private" })).error?.message).toBe("unknown process id private");
    expect(await mallory.call("process/write", { processId: "private", chunk: "eA==" })).toEqual({ status: "unknownProcess" });
    // As upstream, a signal to a process the session does not have answers {}: it went nowhere.
    expect((await mallory.request("process/signal", { processId: "private", signal: "kill" })).result).toEqual({});
    expect(await mallory.call("process/terminate", { processId: "private" })).toEqual({ running: false });
    expect((await alice.list()).map((process) => process.state)).toEqual(["running"]);
    alice.close();
  });
});

describe("limits", () => {
  const limitOf = (error: unknown) => (error as RpcRequestError).data;

  it("refuses sessions, processes and oversized argv past their limits, naming the limit, harming nothing", async () => {
    const daemon = await startTestDaemon({ maxSessions: 2, maxProcessesPerSession: 2, maxProcesses: 3, maxArgvEnvBytes: 4096 });
    const one = await connect(daemon.url);
    const two = await connect(daemon.url);
    const third = await WireClient.connect(daemon.url);
    const refused = await third.request("initialize", { clientName: "x" });
    expect(refused.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "maxSessions" } });

    const running = [await one.start({ argv: ["cat"], pipeStdin: true }), await one.start({ argv: ["sleep", "30"] })];
    const perSession = await one.start({ argv: ["true"] }).catch((error: unknown) => error);
    expect(perSession).toBeInstanceOf(RpcRequestError);
    expect(limitOf(perSession)).toEqual({ limit: "maxProcessesPerSession" });

    await two.start({ argv: ["sleep", "30"] });
    const total = await two.start({ argv: ["true"] }).catch((error: unknown) => error);
    expect(limitOf(total)).toEqual({ limit: "maxProcesses" });

    const big = await two.request("process/start", { processId: "big", argv: ["echo", "x".repeat(5000)], cwd: "/", env: {} }).catch((error: unknown) => error);
    expect(limitOf(big)).toEqual({ limit: "maxArgvEnvBytes" });

    // What was running still runs.
    expect(await running[0]!.write("still here\n")).toBe("accepted");
    expect((await one.list()).every((process) => process.state === "running")).toBe(true);
    one.close();
    two.close();
  });

  it("limits request rate (by reading no faster) and concurrent long-polls per connection", async () => {
    const daemon = await startTestDaemon({ maxRequestsPerSecond: 20, maxLongPolls: 2 });
    const client = await WireClient.ready(daemon.url);
    await client.call("process/start", { processId: "c", argv: ["cat"], cwd: "/", env: {}, pipeStdin: true });
    // Past the burst (40) the socket is read at 20 frames a second: every request is answered, later.
    const replies = await Promise.all(Array.from({ length: 60 }, () => client.request("process/list", {})));
    expect(replies.every((reply) => Array.isArray(reply.result?.processes))).toBe(true);
    expect(await metric(daemon.url, "execmux_read_pauses_total", 'reason="rate"')).toBeGreaterThan(0);

    const other = await WireClient.ready(daemon.url);
    await other.call("process/start", { processId: "c", argv: ["cat"], cwd: "/", env: {}, pipeStdin: true });
    void other.request("process/read", { processId: "c", waitMs: 30_000 });
    void other.request("process/read", { processId: "c", waitMs: 30_000 });
    const third = await other.request("process/read", { processId: "c", waitMs: 30_000 });
    expect(third.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "maxLongPolls" } });
  });

  it("closes connections that never initialize or go idle, and expires the oldest detached session past the cap", async () => {
    const daemon = await startTestDaemon({ handshakeTimeoutMs: 100, idleTimeoutMs: 300, maxDetachedSessions: 1 });
    const silent = await WireClient.connect(daemon.url);
    expect(await silent.closed).toBe(1008);
    const idle = await WireClient.ready(daemon.url);
    expect(await idle.closed).toBe(4002);

    const first = await WireClient.ready(daemon.url);
    const firstId = String(first.messages[0]!.result!.sessionId);
    first.close();
    await first.closed;
    const second = await WireClient.ready(daemon.url);
    second.close();
    await second.closed;
    const probe = await WireClient.connect(daemon.url);
    const resume = await probe.request("initialize", { clientName: "p", resumeSessionId: firstId });
    expect(resume.error?.message).toBe(`unknown session id ${firstId}`);
  });
});

describe("hostile input", () => {
  it("treats __proto__ and constructor in env and envPolicy.set as plain names", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    client.send(
      '{"id":9,"method":"process/start","params":{"processId":"p","argv":["/usr/bin/env"],"cwd":"/","env":{"__proto__":"a","constructor":"b"},"envPolicy":{"inherit":"none","set":{"__proto__":"c","polluted":"d"}}}}',
    );
    await client.closedOf("p");
    const env = client.output("p").trim().split("\n").sort();
    expect(env).toEqual(["__proto__=a", "constructor=b", "polluted=d"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
