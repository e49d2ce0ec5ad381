/**
 * The daemon's end of the link to the native process host: frames cut out
 * of the socket's stream, requests matched to their replies by id, and
 * everything else (process events, logs) handed to `onEvent` in the order
 * the host sent it. Order matters: a process's events come after the reply
 * that started it, and a reply after every event the host produced before
 * it, which is what lets a reader tell "nothing new yet" from "missed".
 */
import type { Socket } from "node:net";
import { Msg, Reader, Writer } from "./link-codec.js";

/** Replies (by type) that answer a request; anything else is an event. */
const REPLIES = new Set<number>([Msg.HelloOk, Msg.Started, Msg.StartFailed, Msg.Written, Msg.Answer, Msg.ReadResult, Msg.ListResult, Msg.Refused]);

export class HostRefusal extends Error {}
export class HostGone extends Error {
  constructor() {
    super("the process host is gone");
  }
}

interface Pending {
  resolve(reply: { type: number; reader: Reader }): void;
  reject(error: Error): void;
  /** Runs as the reply is taken in, before any event after it: what must be in place for those events. */
  onReply?: ((type: number, reader: Reader) => void) | undefined;
}

export type LinkEvent = (type: number, payload: Buffer) => void;

export class HostLink {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** What arrived and is not yet a whole frame. */
  private parts: Buffer[] = [];
  private partsLength = 0;
  private closedBy: Error | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly onEvent: LinkEvent,
    private readonly onClose: (error: Error) => void,
  ) {
    socket.setNoDelay?.(true);
    socket.on("data", (data: Buffer) => this.receive(data));
    socket.on("error", () => undefined);
    socket.on("close", () => this.closed(new HostGone()));
  }

  get open(): boolean {
    return this.closedBy === undefined;
  }

  /** A message with no reply. */
  send(frame: Writer): void {
    if (this.closedBy) return;
    this.socket.write(frame.done());
  }

  /** A request: `build` writes the fields after the id. Rejects with HostRefusal on MSG_REFUSED, HostGone if the link drops. */
  request(
    type: number,
    build: (writer: Writer) => void = () => undefined,
    onReply?: (type: number, reader: Reader) => void,
  ): Promise<{ type: number; reader: Reader }> {
    if (this.closedBy) return Promise.reject(this.closedBy);
    const id = this.nextId++;
    const writer = new Writer(type).u32(id);
    build(writer);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onReply });
      this.socket.write(writer.done());
    });
  }

  close(): void {
    this.socket.end();
  }

  private closed(error: Error): void {
    if (this.closedBy) return;
    this.closedBy = error;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
    this.onClose(error);
  }

  private receive(data: Buffer): void {
    this.parts.push(data);
    this.partsLength += data.length;
    while (this.partsLength >= 5) {
      const head = this.parts[0]!.length >= 4 ? this.parts[0]! : Buffer.concat(this.parts, 4);
      const length = head.readUInt32LE(0);
      if (this.partsLength < 4 + length) return;
      // One part holds the whole frame (most do): no copy. Else one copy of what it spans.
      let frame: Buffer;
      const first = this.parts[0]!;
      if (first.length >= 4 + length) {
        frame = first.subarray(4, 4 + length);
        if (first.length === 4 + length) this.parts.shift();
        else this.parts[0] = first.subarray(4 + length);
      } else {
        const whole = Buffer.concat(this.parts, this.partsLength);
        frame = whole.subarray(4, 4 + length);
        this.parts = whole.length > 4 + length ? [whole.subarray(4 + length)] : [];
      }
      this.partsLength -= 4 + length;
      this.dispatch(frame[0]!, frame.subarray(1));
    }
  }

  private dispatch(type: number, payload: Buffer): void {
    if (!REPLIES.has(type)) {
      this.onEvent(type, payload);
      return;
    }
    const reader = new Reader(payload);
    const id = reader.u32();
    // Id 0: the host turned this link away before any request (another daemon holds it).
    if (type === Msg.Refused && id === 0) return this.closed(new HostRefusal(reader.str()));
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    if (type === Msg.Refused) return pending.reject(new HostRefusal(reader.str()));
    pending.onReply?.(type, reader);
    pending.resolve({ type, reader });
  }
}
