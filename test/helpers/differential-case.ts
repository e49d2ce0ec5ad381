/**
 * What a differential case is made of: steps as data, run identically against
 * both servers, and what is recorded of each (test/helpers/differential.ts).
 */
import type { ScratchFiles } from "./differential-files.js";

/** Connections are named; the first, `a`, is open (and by default handshaken) when the steps begin. */
type On = { on?: string };

export type Step =
  /** Sends a request and records its reply. `params` absent means no params member on the wire. */
  | ({
      request: string;
      params?: unknown;
      id?: number | string;
      /** More top-level members, e.g. `trace`. */
      extra?: Record<string, unknown>;
      /** process/read results: compare output per stream, not chunk boundaries. */
      mergeChunks?: true;
      /** Sends again while the reply is this error code (upstream's client retries -32010 on resume). */
      retryWhileCode?: number;
    } & On)
  /** Sends a JSON value as a text frame; nothing is awaited (pair it with `reply`). */
  | ({ send: unknown } & On)
  /** Sends raw text as a text frame, or as a binary frame. */
  | ({ sendText: string } & On)
  | ({ sendBinary: string } & On)
  /** Records the next reply (result or error) with this id that no step consumed yet. */
  | ({ reply: number | string } & On)
  /** Records the first notification of this method whose params contain `where`. */
  | ({ notification: string; where?: Record<string, unknown> } & On)
  /**
   * Records the first request of this method the server sent (network/policyRequest) and answers
   * it with `result` or `error`; with neither, leaves it unanswered.
   */
  | ({ answer: string; result?: unknown; error?: unknown } & On)
  /** Records every process/* notification of a process up to process/closed, output merged per stream. */
  | ({ processEvents: string } & On)
  /** Records the http/request/bodyDelta stream of a request id up to `done`, and whether reply `replyId` came first. */
  | ({ httpBody: string; replyId: number | string } & On)
  /** Records whether the server closed the connection (a request that would be answered decides it without a timer). */
  | ({ expectClose: true } & On)
  /** Initialize (as today's Codex client sends it) and initialized; records only whether it worked. */
  | ({ handshake: true; resume?: string } & On)
  | { connect: string }
  | { disconnect: string };

/** What one step saw on one server, normalized. */
export type Observation = { step: string; observed: unknown };

export interface DifferentialCase {
  readonly name: string;
  readonly steps: Step[];
  /** Made in each server's scratch directory first (`<scratch>` in frames is that directory). */
  readonly files?: ScratchFiles;
  /** False: connection `a` starts without the handshake. */
  readonly handshake?: false;
  /** Also compare the scratch tree after the steps. */
  readonly snapshot?: true;
  /** Compare environmentInfo in full; elsewhere it is only `<environmentInfo>` where present. */
  readonly environmentInfo?: "compare";
  /** A deviation on purpose: why, and what is compared or asserted instead. */
  readonly differs?: Deviation;
  /**
   * A difference not fixed yet, and why: the case runs as `it.fails`, so it
   * passes while execmux still differs and fails (to be unmarked) once it matches.
   */
  readonly knownFailure?: string;
  /** Per-step wait limit, in ms (default 3000); only a server that does not answer waits it out. */
  readonly timeoutMs?: number;
  /**
   * The upstream release that added what the case checks (0.171.0's
   * transparent TCP): against an older one (EXECMUX_UPSTREAM_CODEX_VERSION)
   * there is nothing to compare with, and the case is skipped, saying so.
   */
  readonly since?: string;
}

export interface Deviation {
  readonly why: string;
  /** Both transcripts go through this before they are compared. */
  readonly project?: (transcript: Observation[]) => unknown;
  /** Assertions on both transcripts, instead of or besides the projection. */
  readonly assert?: (upstream: Observation[], execmux: Observation[]) => void;
}

/** initialize's params as today's Codex client sends them for a configured environment. */
export const CODEX_INITIALIZE = { clientName: "codex-environment", resumeSessionId: null };
