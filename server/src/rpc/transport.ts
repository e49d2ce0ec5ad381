/**
 * What a Connection needs from whatever carries its messages: a WebSocket
 * (transport/websocket-transport.ts) or stdin/stdout
 * (transport/stdio-transport.ts). A transport turns bytes into messages and
 * back, nothing more: it knows no JSON-RPC, so both speak the protocol the
 * same way.
 */
/**
 * A text message already encoded as UTF-8. JSON process output is mostly
 * base64, megabytes of it: built as bytes once (envelope.ts), it is neither
 * scanned for its UTF-8 length nor encoded again on its way out, as a
 * string is. On the 2-core AMD VM that took a fifth to a third of the
 * daemon's CPU time off streaming output to a plain JSON client.
 */
export class Utf8Text {
  constructor(readonly bytes: Buffer) {}

  get length(): number {
    return this.bytes.length;
  }
}

/** A text message (a string, or one already encoded) or a binary one (a Buffer). */
export type OutgoingMessage = string | Utf8Text | Buffer;

export interface MessageTransport {
  /** True until the transport closed or began closing: nothing is sent after that. */
  readonly isOpen: boolean;
  /** Bytes handed to `send` that are not written out yet (flow control waits while this is high). */
  readonly bufferedAmount: number;
  /** Whether binary messages can travel (the binaryOutput extension). */
  readonly carriesBinary: boolean;
  /** Sends one message; `sent` runs once it was written out, or could not be. */
  send(message: OutgoingMessage, sent: (error?: Error) => void): void;
  /** Ends the transport. A WebSocket peer sees the code and reason. */
  close(code: number, reason: string): void;
  /** Stops reading from the peer (the inbound gate: replies the client has not taken). Messages of a read already under way may still arrive. */
  pause(): void;
  /** Reads from the peer again after `pause`. */
  resume(): void;
  /** One whole message from the peer. */
  onMessage(listener: (data: Buffer) => void): void;
  /** A message longer than the transport's bound began to arrive; the transport dropped it. */
  onTooLarge(listener: (limitBytes: number) => void): void;
  /** The peer will send nothing more but may still read (stdin's end); it never fires on a WebSocket. */
  onInputEnd(listener: () => void): void;
  /** The transport is gone, whichever side ended it. Fires once. */
  onClose(listener: () => void): void;
  /** A transport-level error (already handled: a close follows when it matters). */
  onError(listener: (error: Error) => void): void;
  /** Probing whether the peer is still there, where the transport can (WebSocket pings); absent on stdio. */
  readonly liveness?: Liveness;
}

export interface Liveness {
  ping(): void;
  /** A pong, or any message: the peer is there. */
  onSignOfLife(listener: () => void): void;
  /** Drops the peer at once, without a closing handshake. */
  terminate(): void;
}
