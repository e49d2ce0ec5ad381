/**
 * A connection turned observer: its session follower (session-follower.ts)
 * wired to the connection's socket, and the rule of what it may call
 * (observer-methods.ts). Loaded only when a connection observes, so a
 * daemon nobody observes never loads any of it.
 */
import { CloseCode } from "@execmux/shared";
import type { ManagedProcess } from "../process/managed-process.js";
import type { ProcessRecord, Session, SessionObserver } from "../session/session.js";
import { observerFrame, type FrameDialect } from "./observer-frames.js";
import { refuseUnlessObserverMay } from "./observer-methods.js";
import { SessionFollower } from "./session-follower.js";
import { encodeNotification } from "./envelope.js";
import type { OutgoingMessage } from "./transport.js";

/** What the connection lends its follower. */
export interface ObserverPort {
  /** True while the connection can take another frame without passing its bounds. */
  hasRoom(): boolean;
  send(frame: OutgoingMessage): void;
  dialect(): FrameDialect;
  recordOf(process: ManagedProcess): ProcessRecord | undefined;
  /** Runs `task`; if it throws, this connection ends, never the process or the daemon whose event called it. */
  guarded(task: () => void): void;
  close(code: number, reason: string): void;
}

export interface ObserverLink {
  /** What the registry and session tell of new processes and events. */
  readonly observer: SessionObserver;
  /** Follows every process of `session`: from `cursors` where they name it, else from its first retained output. */
  followAll(session: Session, cursors: Readonly<Record<string, number>>): void;
  /** Sends what the socket has room for (called as it drains). */
  pump(): void;
  stop(): void;
  /** Throws -32013 for anything an observer may not call. */
  refuseUnlessAllowed(method: string): void;
}

export function linkObserver(port: ObserverPort): ObserverLink {
  const follower = new SessionFollower({
    hasRoom: port.hasRoom,
    sendStarted: (process) => {
      // Unknown only for a process committed without a record: said so, never guessed.
      const { argv, argvTruncated, startedAt } = port.recordOf(process) ?? { argv: [], argvTruncated: true, startedAt: 0 };
      const params = { processId: process.processId, tty: process.tty, argv, argvTruncated, startedAt };
      port.send(encodeNotification("process/started", params, port.dialect().jsonrpc));
    },
    sendGap: (process, gap) => port.send(encodeNotification("process/gap", { processId: process.processId, ...gap }, port.dialect().jsonrpc)),
    sendEvent: (process, event) => port.send(observerFrame(process, event, port.dialect())),
    ended: () => port.close(CloseCode.ObservedSessionEnded, "the observed session ended"),
  });
  // Called from a process's I/O and from the session: a failure here must reach neither.
  const observer: SessionObserver = {
    processStarted: (process) => port.guarded(() => follower.processStarted(process)),
    processEvent: (process, event) => port.guarded(() => follower.processEvent(process, event)),
    sessionEnded: () => port.guarded(() => follower.sessionEnded()),
  };
  return {
    observer,
    followAll: (session, cursors) => {
      for (const process of session.list()) follower.follow(process, cursors[process.processId] ?? 0);
      follower.pump();
    },
    pump: () => follower.pump(),
    stop: () => follower.stop(),
    refuseUnlessAllowed: refuseUnlessObserverMay,
  };
}
