/**
 * The fs methods whose replies are large (whole files, blocks, directory
 * listings, walks) take turns on each connection, and each waits until the
 * connection has sent what is queued before it reads anything. A client that
 * fires many such requests and stops reading therefore holds at most one
 * reply in the daemon's memory, not one per request.
 */
import type { Disposable } from "../../rpc/connection-resources.js";
import { connectionClosed } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";

const REPLY_LANE = Symbol("fs large-reply lane");

class ReplyLane implements Disposable {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves with a release function once every earlier holder has released. */
  acquire(): Promise<() => void> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise((resolve) => (release = resolve));
    return previous.then(() => release);
  }

  dispose(): void {
    // Holders see the connection's abort signal; nothing is held here.
  }
}

export async function withReplyLane<T>(context: SessionContext, produce: () => Promise<T>): Promise<T> {
  const release = await context.resources.get(REPLY_LANE, () => new ReplyLane()).acquire();
  try {
    await context.whenWritable();
    if (context.signal.aborted) throw connectionClosed();
    return await produce();
  } finally {
    // The reply is queued in the microtasks that follow this handler's
    // return, before any immediate runs: the next holder's wait for a
    // writable connection then sees it.
    setImmediate(release);
  }
}
