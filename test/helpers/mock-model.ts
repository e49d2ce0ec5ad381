/**
 * A scripted model for the real Codex agent: a Responses-API server on
 * 127.0.0.1, port 0, that answers `POST /v1/responses` with server-sent
 * events. A scenario is a list of turns; the first request is answered by the
 * first turn, and so on. A turn sees the request (the tool outputs of the
 * calls made in the turn before, the agent's instructions and context) and
 * answers with tool calls or a final assistant message. Every request body is
 * kept, so a test can assert on what the agent showed the model.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

/** A call of a JSON tool (exec_command, write_stdin) or of a freeform one (apply_patch takes the patch as text). */
export type ToolCall =
  | { readonly name: string; readonly arguments: Record<string, unknown> }
  | { readonly name: string; readonly input: string };

export type ModelReply =
  | { readonly calls: readonly ToolCall[]; readonly repeat?: boolean }
  | { readonly message: string };

/** A turn answers one request; `repeat: true` answers the next request with the same turn again (polling). */
export type Turn = (request: ModelRequest) => ModelReply;

/** One item of the Responses API `input`, as far as these tests read it. */
export interface InputItem {
  readonly type: string;
  readonly role?: string;
  readonly call_id?: string;
  readonly name?: string;
  readonly output?: unknown;
  readonly content?: readonly { readonly type: string; readonly text?: string }[];
}

export interface ToolResult {
  readonly callId: string;
  readonly name: string;
  /** The text the agent gave the model as the tool's result. */
  readonly output: string;
}

export class ModelRequest {
  constructor(
    /** The parsed body, verbatim. */
    readonly body: { readonly input: readonly InputItem[]; readonly [key: string]: unknown },
    private readonly callsBefore: readonly IssuedCall[],
  ) {}

  /** The results of the calls the model made in its previous answer, in call order. */
  get toolResults(): ToolResult[] {
    return this.callsBefore.map((call) => ({ callId: call.callId, name: call.name, output: this.outputOf(call.callId) }));
  }

  /** The one result of the previous answer's one call. */
  get toolResult(): ToolResult {
    const [only, ...more] = this.toolResults;
    if (!only || more.length > 0) throw new Error(`expected one tool result, the previous answer made ${this.callsBefore.length} calls`);
    return only;
  }

  /** All the text the agent put in front of the model: instructions, context messages, tool outputs. */
  get text(): string {
    const parts: string[] = [typeof this.body.instructions === "string" ? this.body.instructions : ""];
    for (const item of this.body.input) {
      for (const content of item.content ?? []) if (content.text !== undefined) parts.push(content.text);
      if (item.output !== undefined) parts.push(outputText(item.output));
    }
    return parts.join("\n");
  }

  private outputOf(callId: string): string {
    const item = this.body.input.find((candidate) => candidate.call_id === callId && candidate.type.endsWith("_call_output"));
    if (!item) throw new Error(`the agent sent no output for ${callId}`);
    return outputText(item.output);
  }
}

/** A tool output is a string, or (for some tools) a list of content parts. */
function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return output.map((part: { text?: string }) => part.text ?? "").join("");
  return JSON.stringify(output);
}

interface IssuedCall {
  readonly callId: string;
  readonly name: string;
}

/** Past this many requests the scenario is assumed to loop, and the model ends the turn. */
const MAX_REQUESTS = 40;

const running = new Set<MockModel>();
afterEach(async () => {
  await Promise.all([...running].map((model) => model.close()));
  running.clear();
});

export class MockModel {
  readonly requests: ModelRequest[] = [];
  /** What went wrong on the model's side: a turn that threw, a request past the script. Empty when the script ran as written. */
  readonly failures: string[] = [];
  private turnIndex = 0;
  private callsBefore: IssuedCall[] = [];
  private nextCallNumber = 1;

  private constructor(
    private readonly server: Server,
    private readonly turns: readonly Turn[],
  ) {}

  static async start(turns: readonly Turn[]): Promise<MockModel> {
    const server = createServer();
    const model = new MockModel(server, turns);
    server.on("request", (request: IncomingMessage, response: ServerResponse) => model.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    running.add(model);
    return model;
  }

  /** The provider's `base_url` for config.toml. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Every tool result the agent reported, in order, over the whole run. */
  get toolResults(): ToolResult[] {
    return this.requests.flatMap((request) => request.toolResults);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method !== "POST" || !request.url?.endsWith("/responses")) {
        this.failures.push(`unexpected ${request.method} ${request.url}`);
        response.writeHead(404).end();
        return;
      }
      let body: ModelRequest["body"];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch (error) {
        this.failures.push(`a request body that is not JSON (${(error as Error).message}): ${request.headers["content-encoding"] ?? "not encoded"}`);
        response.writeHead(400).end();
        return;
      }
      const modelRequest = new ModelRequest(body, this.callsBefore);
      this.requests.push(modelRequest);
      this.stream(response, this.answer(modelRequest));
    });
  }

  private answer(request: ModelRequest): ModelReply {
    const turn = this.turns[this.turnIndex];
    if (!turn) return this.fail(`request ${this.requests.length} came after the last turn of the script`);
    if (this.requests.length > MAX_REQUESTS) return this.fail(`more than ${MAX_REQUESTS} requests: turn ${this.turnIndex + 1} keeps repeating`);
    let reply: ModelReply;
    try {
      reply = turn(request);
    } catch (error) {
      return this.fail(`turn ${this.turnIndex + 1}: ${(error as Error).message}`);
    }
    if (!("calls" in reply) || !reply.repeat) this.turnIndex++;
    return reply;
  }

  /** Ends the agent's turn with a message, so the run finishes at once and the test reports the failure. */
  private fail(reason: string): ModelReply {
    this.failures.push(reason);
    this.turnIndex = this.turns.length;
    return { message: `scripted model gave up: ${reason}` };
  }

  private stream(response: ServerResponse, reply: ModelReply): void {
    const responseId = `resp_${this.requests.length}`;
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (type: string, data: Record<string, unknown>) => response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send("response.created", { response: { id: responseId } });
    this.callsBefore = [];
    if ("calls" in reply) {
      for (const call of reply.calls) send("response.output_item.done", { item: this.callItem(call) });
    } else {
      const item = { type: "message", role: "assistant", id: `msg_${this.requests.length}`, content: [{ type: "output_text", text: reply.message }] };
      send("response.output_item.done", { item });
    }
    const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: null, output_tokens_details: null };
    send("response.completed", { response: { id: responseId, usage } });
    response.end();
  }

  private callItem(call: ToolCall): Record<string, unknown> {
    const callId = `call_${this.nextCallNumber++}`;
    this.callsBefore.push({ callId, name: call.name });
    if ("input" in call) return { type: "custom_tool_call", call_id: callId, name: call.name, input: call.input };
    return { type: "function_call", call_id: callId, name: call.name, arguments: JSON.stringify(call.arguments) };
  }
}
