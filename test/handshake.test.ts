/** Upstream's envelope and handshake rules, on the wire. */
import { describe, expect, it } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { WireClient } from "./helpers/wire-client.js";

const startParams = { processId: "p", argv: ["true"], cwd: "/", env: {}, tty: false };

describe("handshake", () => {
  it("refuses process methods before initialize, then before initialized, with upstream's messages", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.connect(daemon.url);

    const early = await client.request("process/start", startParams);
    expect(early.error).toMatchObject({
      code: ErrorCode.InvalidRequest,
      message: "client must call initialize before using exec methods",
    });

    const init = await client.request("initialize", { clientName: "t" });
    expect(init.result?.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    const beforeInitialized = await client.request("process/start", startParams);
    expect(beforeInitialized.error).toMatchObject({
      code: ErrorCode.InvalidRequest,
      message: "client must send initialized before using exec methods",
    });

    client.send({ method: "initialized", params: {} });
    const started = await client.request("process/start", startParams);
    expect(started.result).toEqual({ processId: "p", sandboxType: "none" });
  });

  it("answers calls sent right behind initialize once it has answered, in order, as upstream handles them one at a time", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.connect(daemon.url);
    // Sent in one turn, so the daemon (in this process) reads all three at once, before initialize has made its session.
    const initialize = client.request("initialize", { clientName: "pipelined" });
    client.send({ method: "initialized", params: {} });
    const start = client.request("process/start", startParams);
    expect((await start).result).toEqual({ processId: "p", sandboxType: "none" });
    expect((await initialize).result?.sessionId).toBeDefined();
    const replies = client.messages.filter((message) => message.method === undefined).map((message) => message.id);
    expect(replies).toEqual([1, 2]);
  });

  it("allows one initialize per connection", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const again = await client.request("initialize", { clientName: "t" });
    expect(again.error).toMatchObject({
      code: ErrorCode.InvalidRequest,
      message: "initialize may only be sent once per connection",
    });
  });

  it("gives every session a different 128-bit id", async () => {
    const daemon = await startTestDaemon();
    const ids = new Set<string>();
    for (let index = 0; index < 20; index++) {
      const client = await WireClient.connect(daemon.url);
      ids.add(String((await client.call("initialize", { clientName: "t" })).sessionId));
    }
    expect(ids.size).toBe(20);
  });

  it("answers malformed JSON with id -1 / -32600 and keeps the socket open", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    client.sendRaw("{not json");
    const error = await client.next((message) => message.id === -1);
    expect(error.error?.code).toBe(ErrorCode.InvalidRequest);
    expect(error.error?.message).toMatch(/^failed to parse websocket JSON-RPC message from exec-server websocket 127\.0\.0\.1:\d+: /);

    client.sendRaw("[1,2,3]");
    client.sendRaw("42");
    const list = await client.request("process/list", {});
    expect(list.result).toEqual({ processes: [] });
    expect(client.messages.filter((message) => message.id === -1)).toHaveLength(3);
  });

  it("accepts binary frames carrying JSON", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.connect(daemon.url);
    client.sendRaw(Buffer.from(JSON.stringify({ id: 7, method: "initialize", params: { clientName: "bin" } })), true);
    const reply = await client.next((message) => message.id === 7);
    expect(reply.result?.sessionId).toBeTypeOf("string");
  });

  it("answers unknown methods with -32601 and bad params with -32602 in serde's words, and ignores unknown fields", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const unknown = await client.request("process/explode", {});
    expect(unknown.error).toEqual({ code: ErrorCode.MethodNotFound, message: "exec-server stub does not implement `process/explode` yet" });

    const wrongType = await client.request("process/start", { ...startParams, argv: "true" });
    expect(wrongType.error).toEqual({ code: ErrorCode.InvalidParams, message: 'invalid type: string "true", expected a sequence' });
    const missing = await client.request("process/start", { processId: "q" });
    expect(missing.error).toEqual({ code: ErrorCode.InvalidParams, message: "missing field `argv`" });

    // Upstream's serde ignores unknown fields; so does execmux (known ones are still checked).
    const unknownField = await client.request("process/read", { processId: "nope", bogus: 1 });
    expect(unknownField.error).toEqual({ code: ErrorCode.InvalidRequest, message: "unknown process id nope" });
  });

  it("replies in the dialect of each request: with jsonrpc 2.0 when asked, without otherwise", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.connect(daemon.url);
    const withVersion = await client.request("initialize", { clientName: "t" }, { jsonrpc: "2.0" });
    expect(withVersion.jsonrpc).toBe("2.0");
    client.send({ jsonrpc: "2.0", method: "initialized" });
    const plain = await client.request("process/list", {});
    expect(plain).not.toHaveProperty("jsonrpc");
    expect(plain.result).toEqual({ processes: [] });
  });

  it("closes the connection on `initialized` before `initialize`, and on any unknown notification, as upstream", async () => {
    const daemon = await startTestDaemon();
    const early = await WireClient.connect(daemon.url);
    early.send({ method: "initialized", params: {} });
    expect(await early.closed).toBe(1008);
    const unknown = await WireClient.ready(daemon.url);
    unknown.send({ method: "process/unheardOf", params: {} });
    expect(await unknown.closed).toBe(1008);
  });
});

describe("oversized frames", () => {
  it("closes the socket with 1009 and keeps serving other clients", async () => {
    const daemon = await startTestDaemon({ maxMessageBytes: 4096 });
    const victim = await WireClient.ready(daemon.url);
    victim.sendRaw(JSON.stringify({ id: 1, method: "process/list", params: {}, padding: "x".repeat(10_000) }));
    expect(await victim.closed).toBe(1009);
    const other = await WireClient.ready(daemon.url);
    expect(await other.call("process/list", {})).toEqual({ processes: [] });
  });
});
