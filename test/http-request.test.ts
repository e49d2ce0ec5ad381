/**
 * http/request on the wire: upstream's six tests/http_request.rs cases, then
 * what they leave out (redirect rules, caps, a client that stops reading, a
 * connection that goes away, proxies), and the exact error messages checked
 * against the real upstream binary. Every HTTP server is a loopback one the
 * test starts.
 */
import { writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { connect as netConnect, type Socket } from "node:net";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { ErrorCode } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { HttpTarget, headerValues, type CapturedRequest } from "./helpers/recording-http-target.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { TEST_TLS_CERT, TEST_TLS_KEY } from "./helpers/tls-fixture.js";
import { startUpstreamExecServer } from "./helpers/upstream.js";
import { WireClient, b64, unb64, type WireMessage } from "./helpers/wire-client.js";
import { bypassedByNoProxy, isLoopback, routeFor } from "../server/dist/methods/http/proxy-route.js";
import { responseHeaders } from "../server/dist/methods/http/response-headers.js";
import { urlErrorReason } from "../server/dist/methods/http/url-error.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

const MiB = 1024 * 1024;

function httpParams(url: string, extra: Record<string, unknown> = {}) {
  return { method: "GET", url, headers: [], requestId: "request-1", ...extra };
}

const isDeltaOf = (requestId: string) => (message: WireMessage) =>
  message.method === "http/request/bodyDelta" && message.params?.requestId === requestId;

function deltasOf(client: WireClient, requestId: string): Record<string, unknown>[] {
  return client.messages.filter(isDeltaOf(requestId)).map((message) => message.params!);
}

function terminalOf(client: WireClient, requestId: string): Promise<WireMessage> {
  return client.next((message) => isDeltaOf(requestId)(message) && message.params?.done === true);
}

/** An https server on 127.0.0.1 with the test certificate, answering with the Host it was asked for; closed after the test. */
async function startHttpsTarget(): Promise<{ port: number; server: HttpsServer }> {
  const server = createHttpsServer({ key: TEST_TLS_KEY, cert: TEST_TLS_CERT }, (request, response) => response.end(`secure ${request.headers.host}`));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinishedClose(server);
  return { port: (server.address() as { port: number }).port, server };
}

/** A proxy that only tunnels: every CONNECT goes to 127.0.0.1 at the port asked for, whatever host is named. */
async function startTunnelProxy(): Promise<{ url: string; authorities: string[] }> {
  const authorities: string[] = [];
  const server = createHttpServer();
  server.on("connect", (request, client: Socket) => {
    authorities.push(request.url ?? "");
    const port = Number((request.url ?? "").split(":").pop());
    const upstream = netConnect(port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinishedClose(server);
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, authorities };
}

const closeAfterTest: { closeAllConnections(): void; close(): void }[] = [];
function onTestFinishedClose(server: { closeAllConnections(): void; close(): void }): void {
  closeAfterTest.push(server);
}
afterEach(() => {
  for (const server of closeAfterTest.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** Sends the head and the first chunks of a chunked body, leaving the response open. */
function startChunked(request: CapturedRequest, chunks: string[], headers: Record<string, string> = {}): void {
  request.response.writeHead(200, headers);
  for (const chunk of chunks) request.response.write(chunk);
}

describe("http/request: upstream's tests/http_request.rs", () => {
  it("buffers the response body (exec_server_http_request_buffers_response_body)", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start();
    const reply = client.request(
      "http/request",
      httpParams(`${target.url}/mcp?case=buffered`, {
        method: "POST",
        headers: [{ name: "x-codex-test", value: "buffered" }],
        bodyBase64: b64("request-body"),
        timeoutMs: 5000,
        requestId: "buffered-request",
      }),
    );
    const captured = await target.next();
    expect([captured.method, captured.target, headerValues(captured.rawHeaders, "x-codex-test"), captured.body.toString()]).toEqual([
      "POST",
      "/mcp?case=buffered",
      ["buffered"],
      "request-body",
    ]);
    captured.response.writeHead(201, { "x-mcp-test": "buffered" }).end("response-body");

    const { result } = await reply;
    expect(result?.status).toBe(201);
    expect(result?.headers).toContainEqual({ name: "x-mcp-test", value: "buffered" });
    expect(unb64(result?.bodyBase64)).toBe("response-body");
  });

  it("bypasses ambient proxies for literal loopback URLs (exec_server_http_request_bypasses_proxy_for_literal_loopback)", async () => {
    const proxy = await HttpTarget.start((request) => request.response.writeHead(502).end("proxy observed request"));
    for (const name of ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]) vi.stubEnv(name, proxy.url);
    vi.stubEnv("NO_PROXY", "");
    vi.stubEnv("no_proxy", "");
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => request.response.writeHead(200).end("direct"));

    for (const host of ["127.0.0.1", "localhost"]) {
      const { result } = await client.request("http/request", httpParams(`http://${host}:${target.port}/mcp`, { timeoutMs: 5000 }));
      expect([result?.status, unb64(result?.bodyBase64)]).toEqual([200, "direct"]);
    }
    expect(target.requests.map((request) => request.target)).toEqual(["/mcp", "/mcp"]);
    expect(proxy.requests).toEqual([]);
  });

  it("returns a redirect without following it when redirectPolicy is stop (exec_server_http_request_can_stop_at_redirects)", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => request.response.writeHead(302, { location: `${target.url}/final` }).end("redirect"));

    const { result } = await client.request("http/request", httpParams(`${target.url}/redirect`, { redirectPolicy: "stop" }));
    expect(result?.status).toBe(302);
    expect(result?.headers).toContainEqual({ name: "location", value: `${target.url}/final` });
    expect(unb64(result?.bodyBase64)).toBe("redirect");
    // Following it would have requested /final before this reply.
    expect(target.requests.map((request) => request.target)).toEqual(["/redirect"]);
  });

  it("replies first, then streams the body as contiguous deltas and a clean terminal frame (exec_server_http_request_streams_response_body_notifications)", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start();
    const reply = client.request(
      "http/request",
      httpParams(`${target.url}/mcp?case=streaming`, {
        headers: [{ name: "accept", value: "text/event-stream" }],
        requestId: "stream-1",
        streamResponse: true,
      }),
    );
    const captured = await target.next();
    expect([captured.target, headerValues(captured.rawHeaders, "accept"), captured.body.length]).toEqual([
      "/mcp?case=streaming",
      ["text/event-stream"],
      0,
    ]);
    startChunked(captured, ["hello "], { "x-mcp-test": "streaming" });
    const { result } = await reply;
    expect([result?.status, result?.bodyBase64]).toEqual([200, ""]);
    expect(result?.headers).toContainEqual({ name: "x-mcp-test", value: "streaming" });
    captured.response.end("world");

    await terminalOf(client, "stream-1");
    const replyIndex = client.messages.findIndex((message) => message.result === result);
    const firstDelta = client.messages.findIndex(isDeltaOf("stream-1"));
    expect(replyIndex).toBeLessThan(firstDelta);
    const deltas = deltasOf(client, "stream-1");
    expect(deltas.map((delta) => delta.seq)).toEqual(deltas.map((_, index) => index + 1));
    expect(deltas.map((delta) => unb64(delta.deltaBase64)).join("")).toBe("hello world");
    expect(deltas.at(-1)).toEqual({ requestId: "stream-1", seq: deltas.length, deltaBase64: "", done: true, error: null });
    // done and error are always serialized.
    for (const delta of deltas) expect(Object.keys(delta)).toEqual(["requestId", "seq", "deltaBase64", "done", "error"]);
  });

  it("refuses a streamed requestId that is still active, and frees it at the terminal frame (exec_server_http_request_rejects_duplicate_stream_request_ids)", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start();
    const url = `${target.url}/mcp?case=duplicate-stream-id`;
    const first = client.request("http/request", httpParams(url, { requestId: "stream-dup", streamResponse: true }));
    const held = await target.next();
    startChunked(held, ["hello"]);
    expect((await first).result?.status).toBe(200);

    const duplicate = await client.request("http/request", httpParams(url, { requestId: "stream-dup", streamResponse: true }));
    expect(duplicate.error).toEqual({
      code: ErrorCode.InvalidParams,
      message: "http/request streamResponse requestId `stream-dup` is already active",
    });
    // As upstream: only streams reserve ids, so a buffered request may share one.
    const buffered = client.request("http/request", httpParams(url, { requestId: "stream-dup" }));
    (await target.next()).response.end("buffered");
    expect(unb64((await buffered).result?.bodyBase64)).toBe("buffered");

    held.response.end();
    await terminalOf(client, "stream-dup");
    const again = client.request("http/request", httpParams(url, { requestId: "stream-dup", streamResponse: true }));
    (await target.next()).response.end("again");
    expect((await again).result?.status).toBe(200);
    await vi.waitFor(() => expect(deltasOf(client, "stream-dup").filter((delta) => delta.done)).toHaveLength(2));
  });

  it("has no timeout unless timeoutMs is given (exec_server_http_request_honors_optional_timeout)", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start();
    const delayedUrl = (name: string) => `${target.url}/mcp?case=optional-timeout&request=${name}`;
    const withoutTimeout = client.request("http/request", httpParams(delayedUrl("absent"), { requestId: "absent" }));
    const withNullTimeout = client.request("http/request", httpParams(delayedUrl("null"), { requestId: "null", timeoutMs: null }));
    const withTimeout = client.request("http/request", httpParams(delayedUrl("short"), { requestId: "short", timeoutMs: 10 }));

    // The server holds every request; only the one with a timeout gives up.
    const timedOut = await withTimeout;
    expect(timedOut.error?.code).toBe(ErrorCode.InternalError);
    expect(timedOut.error?.message).toMatch(/^http\/request failed: /);
    // Answered only now, long after 10 ms (the short one may never have reached the server).
    const answered = new Set<string>();
    while (answered.size < 2) {
      const request = await target.next();
      if (request.target.endsWith("short")) continue;
      request.response.end("slow-success");
      answered.add(request.target);
    }
    expect(unb64((await withoutTimeout).result?.bodyBase64)).toBe("slow-success");
    expect(unb64((await withNullTimeout).result?.bodyBase64)).toBe("slow-success");
  });
});

describe("http/request: beyond upstream's tests", () => {
  it("sends headers in the client's order with repeats, adds accept and host, and sends non-ASCII values as UTF-8", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => request.response.end());
    await client.call(
      "http/request",
      httpParams(target.url, {
        headers: [
          { name: "X-A", value: "1" },
          { name: "x-b", value: "2" },
          { name: "X-A", value: "3" },
          { name: "x-text", value: "é" },
        ],
      }),
    );
    const [captured] = target.requests;
    expect(captured!.rawHeaders.slice(0, 12)).toEqual([
      "x-a", "1", "x-b", "2", "x-a", "3", "x-text", Buffer.from("é").toString("latin1"), "accept", "*/*", "host", `127.0.0.1:${target.port}`,
    ]);
  });

  it("returns response headers lowercase in wire order, dropping values that are not visible ASCII, as upstream", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => {
      const latin1 = (bytes: number[]) => Buffer.from(bytes).toString("latin1");
      request.response.writeHead(200, ["A", "1", "b", "2", "a", "3", "x-bin", latin1([0x66, 0xff]), "x-utf8", latin1([0xc3, 0xa9]), "x-tab", "a\tb"]);
      request.response.end();
    });
    const { headers } = await client.call<{ headers: { name: string; value: string }[] }>("http/request", httpParams(target.url));
    expect(headers.filter(({ name }) => ["a", "b", "x-bin", "x-utf8", "x-tab"].includes(name))).toEqual([
      { name: "a", value: "1" },
      { name: "b", value: "2" },
      { name: "a", value: "3" },
      { name: "x-tab", value: "a\tb" },
    ]);
  });

  it("follows redirects as reqwest does: 302 turns POST into GET, 307 keeps the body, another origin loses credentials", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => {
      const { response } = request;
      if (request.target === "/302") response.writeHead(302, { location: "/final?from=302" }).end();
      else if (request.target === "/307") response.writeHead(307, { location: "/final?from=307" }).end();
      else if (request.target === "/away") response.writeHead(302, { location: `http://localhost:${target.port}/final?from=away` }).end();
      else response.end(`${request.method} ${request.target} ${request.body.toString()}`);
    });
    const body = async (path: string, extra: Record<string, unknown>) =>
      unb64((await client.call("http/request", httpParams(`${target.url}${path}`, extra))).bodyBase64);
    const post = { method: "POST", bodyBase64: b64("payload") };

    expect(await body("/302", post)).toBe("GET /final?from=302 ");
    expect(await body("/307", post)).toBe("POST /final?from=307 payload");
    expect(await body("/away", { headers: [{ name: "authorization", value: "Bearer secret" }, { name: "x-kept", value: "yes" }] })).toBe(
      "GET /final?from=away ",
    );
    const [, afterPost, , , , away] = target.requests.map((request) => request.rawHeaders);
    expect(headerValues(afterPost!, "referer")).toEqual([`${target.url}/302`]);
    expect(headerValues(afterPost!, "content-length")).toEqual([]);
    expect(headerValues(away!, "authorization")).toEqual([]);
    expect(headerValues(away!, "x-kept")).toEqual(["yes"]);
    expect(headerValues(away!, "referer")).toEqual([`${target.url}/`]);
  });

  it("gives up after 10 redirects, and on a redirect to another scheme, with upstream's messages", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) =>
      request.response.writeHead(302, { location: request.target === "/ftp" ? "ftp://127.0.0.1/file" : "/loop" }).end(),
    );
    const loop = await client.request("http/request", httpParams(`${target.url}/loop`));
    expect(loop.error).toEqual({ code: ErrorCode.InternalError, message: "http/request failed: too many redirects" });
    expect(target.requests).toHaveLength(11);
    const ftp = await client.request("http/request", httpParams(`${target.url}/ftp`));
    expect(ftp.error).toEqual({ code: ErrorCode.InternalError, message: "http/request failed: redirect target uses unsupported URL scheme: ftp" });
  });

  it("fails a buffered body past --max-http-body-bytes with -32603 and drops the server's connection", async () => {
    const daemon = await startTestDaemon({ maxHttpBodyBytes: 1 * MiB });
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start();
    const expected = {
      code: ErrorCode.InternalError,
      message:
        "failed to read http/request response body: the body is larger than the 1048576 bytes a buffered http/request may hold (--max-http-body-bytes); ask for streamResponse",
    };

    // Declared too large: refused before the body is read.
    const declared = client.request("http/request", httpParams(`${target.url}/declared`));
    const first = await target.next();
    first.response.writeHead(200, { "content-length": String(64 * MiB) });
    first.response.write(Buffer.alloc(64 * 1024));
    expect((await declared).error).toEqual(expected);
    await first.abandoned;

    // Undeclared (chunked): refused as soon as it passes the cap, while the server still has more to send.
    const chunked = client.request("http/request", httpParams(`${target.url}/chunked`));
    const second = await target.next();
    second.response.writeHead(200);
    const block = Buffer.alloc(256 * 1024, 0x61);
    const writeMore = () => {
      while (!second.response.destroyed && second.response.write(block));
    };
    second.response.on("drain", writeMore);
    writeMore();
    expect((await chunked).error).toEqual(expected);
    await second.abandoned;

    // Up to the cap is fine.
    const fits = client.request("http/request", httpParams(`${target.url}/fits`));
    (await target.next()).response.end(Buffer.alloc(1 * MiB, 0x62));
    expect(Buffer.from(String((await fits).result?.bodyBase64), "base64").length).toBe(1 * MiB);
  });

  it("splits a large streamed body into deltas of at most 1 MiB, in order and complete", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const body = Buffer.alloc(5 * MiB + 123);
    for (let index = 0; index < body.length; index++) body[index] = (index * 7) % 251;
    const target = await HttpTarget.start((request) => request.response.end(body));
    await client.call("http/request", httpParams(target.url, { requestId: "big", streamResponse: true }));
    await terminalOf(client, "big");
    const deltas = deltasOf(client, "big").map((delta) => Buffer.from(String(delta.deltaBase64), "base64"));
    expect(deltas.every((delta) => delta.length <= MiB)).toBe(true);
    expect(Buffer.concat(deltas).equals(body)).toBe(true);
  });

  it("ends a stream whose body breaks off with a terminal frame carrying upstream's error", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start();
    const reply = client.request("http/request", httpParams(target.url, { requestId: "cut", streamResponse: true }));
    const captured = await target.next();
    captured.response.writeHead(200, { "content-length": "100" });
    captured.response.write("0123456789");
    await reply;
    await client.next((message) => isDeltaOf("cut")(message) && message.params?.seq === 1);
    captured.response.socket?.destroy();
    const terminal = await terminalOf(client, "cut");
    expect(terminal.params).toEqual({ requestId: "cut", seq: 2, deltaBase64: "", done: true, error: "error decoding response body" });
  });

  it("applies timeoutMs to a streamed body too: the terminal frame reports it", async () => {
    // The head comes at once; 2 s leaves a loaded machine time to deliver it before the deadline.
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => startChunked(request, ["first"]));
    const { result } = await client.request("http/request", httpParams(target.url, { requestId: "slow", streamResponse: true, timeoutMs: 2000 }));
    expect(result?.status).toBe(200);
    const terminal = await terminalOf(client, "slow");
    expect(terminal.params?.error).toBe("error decoding response body");
    expect(deltasOf(client, "slow").map((delta) => unb64(delta.deltaBase64))).toEqual(["first", ""]);
    await target.requests[0]!.abandoned;
  });

  it("aborts the HTTP request when the client's connection closes mid-stream", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => startChunked(request, ["data: one\n\n"]));
    await client.call("http/request", httpParams(target.url, { requestId: "sse", streamResponse: true }));
    await client.next(isDeltaOf("sse"));
    client.close();
    await target.requests[0]!.abandoned;
  });

  it("caps concurrent requests per connection (--max-http-requests); a finished stream frees its slot", async () => {
    const daemon = await startTestDaemon({ maxHttpRequests: 2 });
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => startChunked(request, ["x"]));
    await client.call("http/request", httpParams(target.url, { requestId: "a", streamResponse: true }));
    await client.call("http/request", httpParams(target.url, { requestId: "b", streamResponse: true }));
    const third = await client.request("http/request", httpParams(target.url, { requestId: "c", streamResponse: true }));
    expect(third.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "maxHttpRequests" } });

    target.requests[0]!.response.end();
    await terminalOf(client, "a");
    const fourth = await client.request("http/request", httpParams(target.url, { requestId: "c", streamResponse: true }));
    expect(fourth.result?.status).toBe(200);
  });

  it("keeps the daemon's memory bounded while the client stops reading a large streamed body", async () => {
    // Upper bound on what the daemon may hold for one stalled stream: one delta
    // (1 MiB, its base64 and its frame) and the socket's high-water mark, with
    // room for allocator noise. Buffering the body instead would grow by the
    // ~100 MiB the kernel cannot absorb.
    const BOUND = 32 * MiB;
    const BODY = 192 * MiB;
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const heldBytes = () => {
      gc();
      const usage = process.memoryUsage();
      return usage.heapUsed + usage.arrayBuffers;
    };

    const daemon = await startTestDaemon();
    const block = Buffer.alloc(MiB, 0x61);
    let written = 0;
    let waitingForDrain = false;
    const target = await HttpTarget.start(({ response }) => {
      response.writeHead(200, { "content-length": String(BODY) });
      const pump = () => {
        waitingForDrain = false;
        while (written < BODY) {
          written += block.length;
          if (!response.write(block)) {
            waitingForDrain = true;
            response.once("drain", pump);
            return;
          }
        }
        response.end();
      };
      pump();
    });
    // A raw client that counts what it gets instead of keeping it.
    const socket = new WebSocket(daemon.url);
    await new Promise((resolve) => socket.once("open", resolve));
    let received = 0;
    const replies = new Map<number, (message: WireMessage) => void>();
    socket.on("message", (data) => {
      const message = JSON.parse(data.toString()) as WireMessage;
      if (message.method === "http/request/bodyDelta") received += Buffer.byteLength(String(message.params?.deltaBase64), "base64");
      else if (typeof message.id === "number") replies.get(message.id)?.(message);
    });
    const call = (id: number, method: string, params: unknown) =>
      new Promise<WireMessage>((resolve) => {
        replies.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      });
    await call(1, "initialize", { clientName: "stalled" });
    socket.send(JSON.stringify({ method: "initialized", params: {} }));
    const baseline = heldBytes();

    const reply = await call(2, "http/request", httpParams(target.url, { requestId: "flood", streamResponse: true }));
    expect(reply.result?.status).toBe(200);
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();

    // Stalled: the server waits for a drain that does not come (or, were the daemon
    // to swallow the body, has written all of it). There is no event for "nothing
    // more happens", so a stall is seen as no progress over a second.
    let lastWritten = -1;
    await vi.waitFor(
      () => {
        const progressed = written !== lastWritten;
        lastWritten = written;
        if (written < BODY && (progressed || !waitingForDrain)) throw new Error(`still flowing: ${written} bytes written`);
      },
      { interval: 1000, timeout: 45_000 },
    );
    const growth = heldBytes() - baseline;
    expect(growth, `held ${(growth / MiB).toFixed(1)} MiB more while stalled (server wrote ${written / MiB} MiB)`).toBeLessThan(BOUND);
    expect(written).toBeLessThan(BODY);

    // The stream was paused, not lost: closing the client ends it at the server.
    socket.terminate();
    await target.requests[0]!.abandoned;
    expect(received).toBeLessThan(BODY);
  });

  it("sends other URLs through HTTP_PROXY, with its credentials, and https ones through a CONNECT", async () => {
    const proxy = await HttpTarget.start((request) => request.response.end("via proxy"));
    vi.stubEnv("HTTP_PROXY", `http://user:secret@127.0.0.1:${proxy.port}`);
    vi.stubEnv("HTTPS_PROXY", proxy.url);
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);

    const proxied = await client.call("http/request", httpParams("http://example.invalid/path?q=1"));
    expect(unb64(proxied.bodyBase64)).toBe("via proxy");
    expect(proxy.requests[0]!.target).toBe("http://example.invalid/path?q=1");
    expect(headerValues(proxy.requests[0]!.rawHeaders, "proxy-authorization")).toEqual([`Basic ${b64("user:secret")}`]);

    const tunnelled = await client.request("http/request", httpParams("https://example.invalid/secure"));
    expect(tunnelled.error?.message).toBe("http/request failed: error sending request for url (https://example.invalid/secure)");
    expect(proxy.connects.map((connect) => connect.authority)).toEqual(["example.invalid:443"]);
    // NO_PROXY exemptions are checked below as a unit: sent directly, such a request
    // would need a DNS lookup, and tests reach nothing beyond loopback.
  });

  it("speaks https, trusting the roots CODEX_CA_CERTIFICATE adds, directly and through a CONNECT tunnel", async () => {
    const { port } = await startHttpsTarget();
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);

    // Node's own roots do not know the test certificate.
    const untrusted = await client.request("http/request", httpParams(`https://localhost:${port}/`));
    expect(untrusted.error).toEqual({
      code: ErrorCode.InternalError,
      message: `http/request failed: error sending request for url (https://localhost:${port}/)`,
    });

    const bundle = join(scratchDirectory("http-ca"), "ca.pem");
    writeFileSync(bundle, TEST_TLS_CERT);
    vi.stubEnv("CODEX_CA_CERTIFICATE", bundle);
    const direct = await client.call("http/request", httpParams(`https://localhost:${port}/`));
    expect(unb64(direct.bodyBase64)).toBe(`secure localhost:${port}`);

    const proxy = await startTunnelProxy();
    vi.stubEnv("HTTPS_PROXY", proxy.url);
    const tunnelled = await client.call("http/request", httpParams(`https://example.invalid:${port}/`));
    expect(unb64(tunnelled.bodyBase64)).toBe(`secure example.invalid:${port}`);
    expect(proxy.authorities).toEqual([`example.invalid:${port}`]);
  });

  it("treats a timeoutMs too large for a timer as no timeout", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start();
    // Node fires a setTimeout longer than 2^31-1 ms at once; this must not time out.
    const reply = client.request("http/request", httpParams(target.url, { timeoutMs: 2 ** 40 }));
    const failedEarly = reply.then((early) => Promise.reject(new Error(`answered before the server did: ${JSON.stringify(early)}`)));
    failedEarly.catch(() => undefined);
    const held = await Promise.race([target.next(), failedEarly]);
    // A whole exchange later, a timer fired at once would long have failed the request.
    const quick = await HttpTarget.start((request) => request.response.end("quick"));
    expect(unb64((await client.call("http/request", httpParams(quick.url, { requestId: "quick" }))).bodyBase64)).toBe("quick");
    held.response.end("late");
    expect(unb64((await reply).result?.bodyBase64)).toBe("late");
  });

  it("a header's valueEnvVar reads the daemon's environment, never its own EXECMUX_* settings or Codex's credentials", async () => {
    vi.stubEnv("EXECMUX_TOKEN", "the-daemon-token");
    vi.stubEnv("OPENAI_API_KEY", "sk-the-agent-key");
    vi.stubEnv("SHARED_HEADER_TOKEN", "shared");
    vi.stubEnv("HEADER_WITH_NEWLINE", "a\r\nx-injected: 1");
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const target = await HttpTarget.start((request) => request.response.end("seen"));
    const send = (valueEnvVar: string, requestId: string) =>
      client.request("http/request", httpParams(target.url, { requestId, headers: [{ name: "x-token", value: "Bearer ", valueEnvVar }] }));

    const allowed = await send("SHARED_HEADER_TOKEN", "allowed");
    expect(unb64(allowed.result?.bodyBase64)).toBe("seen");
    for (const [index, name] of ["EXECMUX_TOKEN", "execmux_token", "OPENAI_API_KEY", "HEADER_WITH_NEWLINE"].entries()) {
      const refused = await send(name, `refused-${index}`);
      expect(refused.error, name).toMatchObject({ code: ErrorCode.InvalidParams });
      expect(JSON.stringify(refused.error)).not.toMatch(/the-daemon-token|sk-the-agent-key|injected/);
    }
    // Only the allowed request reached the target, with the value the daemon's environment gave it.
    expect(target.requests.map((request) => headerValues(request.rawHeaders, "x-token"))).toEqual([["Bearer shared"]]);
    expect(await client.call("environment/status")).toEqual({ status: "ready" });
  });
});

describe("http/request: error messages, as the upstream binary words them", () => {
  it("answers the same frames with the same codes and messages as codex exec-server", async () => {
    // No ambient proxy: upstream 0.169.0 would send even loopback requests through it.
    for (const name of ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]) vi.stubEnv(name, undefined);
    const target = await HttpTarget.start((request) => {
      const { response } = request;
      if (request.target === "/loop") response.writeHead(302, { location: "/loop" }).end();
      else if (request.target === "/ftp") response.writeHead(302, { location: "ftp://127.0.0.1/x" }).end();
      else if (request.target === "/cut") {
        response.writeHead(200, { "content-length": "100" });
        response.write("0123456789", () => response.socket?.destroy());
      } else response.end("ok");
    });
    const closed = await HttpTarget.start();
    const closedUrl = `${closed.url}/nothing-listens`;
    await closed.close();

    const frames: Record<string, unknown>[] = [
      httpParams(target.url, { method: "GE T" }),
      httpParams(target.url, { method: "" }),
      ...["not a url", "", "http://", "http://:80/", "http://host:99999/", "http://host:port/", "http://[::1/", "http://exa mple.com/", "http://256.256.256.256/", "//example.com/x"].map((url) => httpParams(url)),
      httpParams("ftp://127.0.0.1/x"),
      httpParams("mailto:someone@example.com"),
      httpParams(target.url, { headers: [{ name: "bad name", value: "1" }] }),
      httpParams(target.url, { headers: [{ name: "", value: "1" }] }),
      httpParams(target.url, { headers: [{ name: "x", value: "a\nb" }] }),
      httpParams(target.url, { headers: [{ name: "x", value: "\u007f" }] }),
      httpParams(target.url, { redirectPolicy: "sideways" }),
      // bodyBase64 is decoded while the params are, strictly, and refused in the base64 crate's words (before the method is looked at).
      ...["!!!", "aGk", "aG=k", "aGk=\n"].map((bodyBase64) => httpParams(target.url, { method: "POST", bodyBase64 })),
      httpParams(target.url, { method: "GE T", bodyBase64: "!!!" }),
      { method: "GET", url: target.url },
      httpParams(target.url, { timeoutMs: 0 }),
      httpParams(closedUrl),
      httpParams(`${target.url}/loop`),
      httpParams(`${target.url}/ftp`),
      httpParams(`${target.url}/cut`),
    ];
    const answers = async (url: string) => {
      const client = await WireClient.ready(url);
      const errors: unknown[] = [];
      for (const params of frames) {
        const reply = await client.request("http/request", params);
        errors.push(reply.error ?? reply.result);
      }
      const stream = await client.request("http/request", httpParams(`${target.url}/cut`, { requestId: "cut", streamResponse: true }));
      errors.push(stream.error ?? (await terminalOf(client, "cut")).params?.error);
      return errors;
    };

    const upstream = await startUpstreamExecServer();
    const expected = await answers(upstream.url);
    const daemon = await startTestDaemon();
    expect(await answers(daemon.url)).toEqual(expected);
    // The comparison means something only if upstream refused them all.
    expect(expected.slice(0, -1).every((answer) => typeof (answer as { message?: unknown }).message === "string")).toBe(true);
  });
});

describe("http/request: pure units", () => {
  it("words URL errors as rust-url does (answers taken from the upstream binary)", () => {
    const cases: Record<string, string> = {
      "": "relative URL without a base",
      "not a url": "relative URL without a base",
      "//example.com/x": "relative URL without a base",
      "http://": "empty host",
      "http://:80/": "empty host",
      "http://user@:80": "empty host",
      "http://host:99999/": "invalid port number",
      "http://host:port/": "invalid port number",
      "http://[::1/": "invalid IPv6 address",
      "https://[fe80::1%25eth0]/": "invalid IPv6 address",
      "http://256.256.256.256/": "invalid IPv4 address",
      "http://exa mple.com/": "invalid international domain name",
      "http://xn--/": "invalid international domain name",
      "http://ex<ample.com/": "invalid international domain name",
      "http://exa\u0000mple.com/": "invalid international domain name",
    };
    for (const [url, reason] of Object.entries(cases)) expect([url, urlErrorReason(url)]).toEqual([url, reason]);
  });

  it("reads NO_PROXY as reqwest does and knows loopback hosts", () => {
    expect(bypassedByNoProxy("api.example.com", "example.com")).toBe(true);
    expect(bypassedByNoProxy("example.com", ".example.com")).toBe(true);
    expect(bypassedByNoProxy("notexample.com", "example.com")).toBe(false);
    expect(bypassedByNoProxy("10.1.2.3", "10.0.0.0/8")).toBe(true);
    expect(bypassedByNoProxy("11.1.2.3", "10.0.0.0/8")).toBe(false);
    expect(bypassedByNoProxy("anything.example", " foo , * ")).toBe(true);
    expect(bypassedByNoProxy("example.com", "")).toBe(false);
    expect(["localhost", "127.9.8.7", "::1"].map(isLoopback)).toEqual([true, true, true]);
    const env = { HTTP_PROXY: "127.0.0.1:3128", https_proxy: "http://proxy.example:8080", NO_PROXY: "exempt.example" };
    expect(routeFor(new URL("http://api.example/"), env)).toEqual({ kind: "proxy", proxy: new URL("http://127.0.0.1:3128") });
    expect(routeFor(new URL("https://api.example/"), env)).toEqual({ kind: "proxy", proxy: new URL("http://proxy.example:8080") });
    expect(routeFor(new URL("http://api.exempt.example/"), env)).toEqual({ kind: "direct" });
    expect(routeFor(new URL("http://127.0.0.1:9/"), env)).toEqual({ kind: "direct" });
    expect(routeFor(new URL("http://api.example/"), { ALL_PROXY: "socks5://127.0.0.1:1080" })).toEqual({ kind: "unsupported", proxy: "socks5:" });
    // httpoxy: under CGI, HTTP_PROXY may come from a request header.
    expect(routeFor(new URL("http://api.example/"), { ...env, REQUEST_METHOD: "GET" })).toEqual({ kind: "direct" });
    expect(["localhost.example", "192.168.1.5", "::2"].map(isLoopback)).toEqual([false, false, false]);
  });

  it("keeps visible-ASCII response header values only", () => {
    expect(responseHeaders(["X-One", "a b", "x-two", "caf\u00e9", "x-three", "tab\there"])).toEqual([
      { name: "x-one", value: "a b" },
      { name: "x-three", value: "tab\there" },
    ]);
  });
});
