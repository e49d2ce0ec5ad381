/**
 * An observer's notifications for a process event. The owner's path
 * (connection.ts) builds output frames in place or in pooled slabs that its
 * send queue holds until written; an observer's frame is a copy of its own,
 * so an observer never shares a buffer with the owner's queue or the log.
 */
import type { ManagedProcess, ProcessEvent } from "../process/managed-process.js";
import { encodeBinaryOutput, encodeNotification, processEndNotification } from "./envelope.js";
import type { OutgoingMessage } from "./transport.js";

export interface FrameDialect {
  /** The observer chose binary output frames (initialize binaryOutput). */
  readonly binary: boolean;
  /** Its notifications carry "jsonrpc": "2.0". */
  readonly jsonrpc: boolean;
}

export function observerFrame(process: ManagedProcess, event: ProcessEvent, dialect: FrameDialect): OutgoingMessage {
  const { processId } = process;
  switch (event.kind) {
    case "output": {
      if (!dialect.binary) {
        const params = { processId, seq: event.seq, stream: event.stream, chunk: event.data.toString("base64") };
        return encodeNotification("process/output", params, dialect.jsonrpc);
      }
      // A fresh buffer: the event's data is copied into it.
      return encodeBinaryOutput(Buffer.from(processId), event.seq, event.stream, event.data);
    }
    case "exited":
    case "closed":
      return processEndNotification(processId, event, process.sandboxDenied, dialect.jsonrpc);
  }
}
