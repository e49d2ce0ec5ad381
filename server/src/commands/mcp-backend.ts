/**
 * The UnifiedExec behind `execmux mcp`'s tools, on a daemon connection that
 * comes and goes. An agent starts its MCP servers when it starts, often
 * before the daemon is up, and keeps them for hours across daemon restarts,
 * so: the first connection is retried until it works; a short outage is
 * the SDK's own reconnect (same session, nothing lost); and when the
 * daemon's session is gone (a restart), a new session is opened and the next
 * tool result says so, naming the tool sessions that were lost with it.
 */
import { backoffDelay, resolveReconnectOptions, type ExecmuxClient, UnifiedExec } from "@execmux/client";

/** How long a tool call waits for a daemon that cannot be reached before it fails (retries go on). */
const DEFAULT_CALL_WAIT_MS = 20_000;
/** Between connection attempts: a local daemon coming up should be found within a couple of seconds. */
const RETRY = resolveReconnectOptions({ initialDelayMs: 100, maxDelayMs: 2_000 });

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class McpBackend {
  private client: ExecmuxClient | undefined;
  private exec: UnifiedExec | undefined;
  private connecting: Promise<void> | undefined;
  private lastError = "not connected yet";
  /** Tool session ids whose processes went with a lost daemon session. */
  private readonly lost = new Set<number>();
  private nextSessionId = 0;
  /** Told once, in the next tool result. */
  private notice: string | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly connectClient: () => Promise<ExecmuxClient>,
    private readonly log: (line: string) => void,
    private readonly callWaitMs = DEFAULT_CALL_WAIT_MS,
  ) {}

  /** Starts connecting in the background. */
  start(): void {
    this.connect();
  }

  /**
   * The UnifiedExec to use now, after waiting (up to callWaitMs) for a
   * connection, and a notice for the tool result if something happened since
   * the last one.
   */
  async current(): Promise<{ exec: UnifiedExec; notice: string | undefined }> {
    if (!this.exec) {
      this.connect();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.connecting, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.callWaitMs)))]);
      clearTimeout(timer);
    }
    if (!this.exec) {
      throw new Error(`the execmux daemon at ${this.url} cannot be reached (${this.lastError}); still trying, call again later`);
    }
    const notice = this.notice;
    this.notice = undefined;
    return { exec: this.exec, notice };
  }

  /** True for a tool session id whose process was lost with the daemon's session. */
  wasLost(sessionId: number): boolean {
    return this.lost.has(sessionId);
  }

  /** Ends every process the tools started and the connection. */
  async close(): Promise<void> {
    this.closed = true;
    await this.exec?.terminateAll();
    this.client?.close();
  }

  private connect(): void {
    this.connecting ??= this.connectUntilConnected().finally(() => {
      this.connecting = undefined;
    });
  }

  private async connectUntilConnected(): Promise<void> {
    for (let attempt = 1; !this.closed; attempt++) {
      try {
        this.use(await this.connectClient());
        if (attempt > 1) this.log(`connected to ${this.url}`);
        return;
      } catch (error) {
        this.lastError = error instanceof Error ? error.message : String(error);
        if (attempt === 1) this.log(`waiting for the daemon: ${this.lastError}`);
        await sleep(backoffDelay(RETRY, attempt));
      }
    }
  }

  private use(client: ExecmuxClient): void {
    const exec = new UnifiedExec(client, { firstSessionId: this.nextSessionId });
    this.client = client;
    this.exec = exec;
    client.on("sessionLost", (error) => {
      if (this.client !== client) return;
      const lostIds = exec.sessionIds;
      for (const id of lostIds) this.lost.add(id);
      // New ids continue after the old ones, so an old id never names a new process.
      this.nextSessionId = exec.upcomingSessionId;
      this.client = undefined;
      this.exec = undefined;
      this.notice =
        `Note: the execmux daemon's session was lost (${error.message}); a new session was started.` +
        (lostIds.length > 0 ? ` The processes of session IDs ${lostIds.join(", ")} are gone.` : "");
      this.log(this.notice);
      this.connect();
    });
  }
}
