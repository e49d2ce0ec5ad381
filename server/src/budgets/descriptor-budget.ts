/**
 * File descriptors a client's requests hold open in the daemon beyond the
 * request itself: its WebSocket connections, its fs/open handles, its
 * http/request calls in flight (each a socket to the server), its capability
 * discoveries in flight (each a walk's directory and a file, or a helper's pipes). Each is
 * charged to the client's identity and to the daemon, and refused past
 * either cap with -32011 (`data.limit` names which), so one client at its
 * cap leaves the others theirs, and the daemon never runs out of
 * descriptors for what it needs to serve: accepting, logging, /readyz, and
 * the short-lived descriptors of other requests (a file read whole, a
 * directory listed), which come out of the headroom left below the
 * process's limit.
 *
 * Defaults follow the process's own limit (RLIMIT_NOFILE, which Node raises
 * to its hard limit at start): the daemon may charge all but an eighth of it
 * (at least 256 kept back), one client a quarter of that. Read once, when
 * the first descriptor is charged. A process's own pipes and terminal are
 * not charged here: they live in the process host that holds the process.
 */
import { readFileSync } from "node:fs";
import { limitExceeded } from "../errors/rpc-error.js";

/** What is charged: named in the refusal. */
export type DescriptorUse = "connection" | "file handle" | "http request" | "capability discovery";

export interface DescriptorLimits {
  /** The process's soft RLIMIT_NOFILE. */
  readonly processLimit: number;
  /** Descriptors the daemon charges at most, all clients together. */
  readonly total: number;
  /** Descriptors one client is charged at most. */
  readonly perClient: number;
}

/** Assumed when /proc cannot say (the usual soft limit). */
const FALLBACK_PROCESS_LIMIT = 1024;
const LEAST_HEADROOM = 256;

/** The soft limit on open files of this process, from /proc/self/limits. */
export function processDescriptorLimit(): number {
  try {
    const line = readFileSync("/proc/self/limits", "latin1").split("\n").find((entry) => entry.startsWith("Max open files"));
    const soft = Number(line?.slice("Max open files".length).trim().split(/\s+/)[0]);
    return Number.isSafeInteger(soft) && soft > 0 ? soft : FALLBACK_PROCESS_LIMIT;
  } catch {
    return FALLBACK_PROCESS_LIMIT;
  }
}

/** The caps: configured ones (above 0) as given, the others derived from the process's limit. */
export function descriptorLimits(configured: { maxDescriptors: number; maxDescriptorsPerClient: number }, processLimit = processDescriptorLimit()): DescriptorLimits {
  const headroom = Math.max(LEAST_HEADROOM, Math.ceil(processLimit / 8));
  const total = configured.maxDescriptors > 0 ? configured.maxDescriptors : Math.max(1, processLimit - headroom);
  const perClient = configured.maxDescriptorsPerClient > 0 ? configured.maxDescriptorsPerClient : Math.max(1, Math.floor(total / 4));
  return { processLimit, total, perClient: Math.min(perClient, total) };
}

export class DescriptorBudget {
  private limitsFound: DescriptorLimits | undefined;
  private used = 0;
  private readonly usedBy = new Map<string, number>();

  constructor(private readonly findLimits: () => DescriptorLimits) {}

  get limits(): DescriptorLimits {
    return (this.limitsFound ??= this.findLimits());
  }

  /** Descriptors charged now, all clients together. */
  get charged(): number {
    return this.used;
  }

  chargedTo(client: string): number {
    return this.usedBy.get(client) ?? 0;
  }

  /** Charges one descriptor to `client`; throws -32011 past a cap. Call the result when it is closed (idempotent). */
  take(client: string, use: DescriptorUse): () => void {
    const { total, perClient } = this.limits;
    const mine = this.usedBy.get(client) ?? 0;
    if (mine >= perClient) {
      throw limitExceeded("maxDescriptorsPerClient", `this client already holds its maximum of ${perClient} descriptors (connections, file handles, http requests); a ${use} needs one more`);
    }
    if (this.used >= total) {
      throw limitExceeded("maxDescriptors", `the daemon holds its maximum of ${total} descriptors for clients; a ${use} needs one more`);
    }
    this.used++;
    this.usedBy.set(client, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      const left = (this.usedBy.get(client) ?? 1) - 1;
      if (left === 0) this.usedBy.delete(client);
      else this.usedBy.set(client, left);
    };
  }
}
