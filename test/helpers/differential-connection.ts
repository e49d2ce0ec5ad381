/**
 * One WebSocket of a differential case: it sends exactly what a step says and
 * keeps every frame it receives, numbered by arrival, until a step consumes
 * it. Unlike WireClient, a frame is consumed once, so two replies with id -1
 * are two observations, and what no step asked for is still visible at the end.
 */
import WebSocket from "ws";

export interface ReceivedFrame {
  /** Arrival order across the whole connection. */
  readonly index: number;
  readonly message: Record<string, unknown>;
  consumed: boolean;
}

export type Outcome<T> = { ok: T } | { timeout: true } | { closed: true };

export class DifferentialConnection {
  readonly frames: ReceivedFrame[] = [];
  /** Everything sent and received, raw, in order: for the dump, not compared. */
  readonly log: string[] = [];
  closeCode: number | undefined;
  private listeners: (() => void)[] = [];

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data, isBinary) => {
      const text = data.toString();
      this.log.push(`<- ${isBinary ? "[binary] " : ""}${text}`);
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(text) as Record<string, unknown>;
      } catch {
        message = { unparseableFrame: text };
      }
      this.frames.push({ index: this.frames.length, message, consumed: false });
      this.notify();
    });
    socket.on("close", (code) => {
      this.closeCode = code;
      this.log.push(`closed ${code}`);
      this.notify();
    });
  }

  static async open(url: string): Promise<DifferentialConnection> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    return new DifferentialConnection(socket);
  }

  get isClosed(): boolean {
    return this.closeCode !== undefined;
  }

  send(data: string, binary = false): boolean {
    this.log.push(`-> ${binary ? "[binary] " : ""}${data}`);
    if (this.isClosed || this.socket.readyState !== WebSocket.OPEN) return false;
    this.socket.send(binary ? Buffer.from(data) : data, { binary });
    return true;
  }

  /**
   * Resolves once `select` returns a value for the frames received so far
   * (re-checked on every frame), or the socket closed, or `timeoutMs` passed.
   */
  waitFor<T>(select: (frames: ReceivedFrame[]) => T | undefined, timeoutMs: number): Promise<Outcome<T>> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const selected = select(this.frames);
        if (selected !== undefined) resolve({ ok: selected });
        else if (this.isClosed) resolve({ closed: true });
        else return false;
        return true;
      };
      if (check()) return;
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((listener) => listener !== onChange);
        resolve({ timeout: true });
      }, timeoutMs);
      const onChange = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((listener) => listener !== onChange);
      };
      this.listeners.push(onChange);
    });
  }

  /** Closes from this side and resolves once the close handshake is over. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    const closed = new Promise<void>((resolve) => this.socket.once("close", () => resolve()));
    this.socket.close();
    await closed;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
