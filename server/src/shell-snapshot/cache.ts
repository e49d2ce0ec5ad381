/**
 * Captured snapshots, kept per session as upstream keeps them (a client that
 * resumes its session finds them again; a new session captures afresh): one
 * entry per scope, shell, cwd, environment policy and sandbox, the 16 most
 * recently used. Starts that need the same entry share one capture. A failed
 * capture is remembered: starts within the next second run without a
 * snapshot; after that one may try again, three tries in all, and then the
 * entry stays failed until it is evicted (upstream's rule).
 *
 * Beyond upstream: the snapshots of one identity's sessions hold at most
 * 16 MiB, all of them at most 64 MiB (least recently used out first);
 * captures run at most 2 at a time per identity and 8 in the daemon, the rest
 * wait their turn. A session's snapshots go with the session (they are held
 * weakly); nothing here runs unless a start asks for a snapshot: no timer, no
 * sweep.
 */
import type { ShellSnapshot } from "./parse.js";

export const MAX_ENTRIES_PER_SESSION = 16;
export const MAX_BYTES_PER_IDENTITY = 16 * 1024 * 1024;
export const MAX_BYTES = 64 * 1024 * 1024;
const RETRY_AFTER_MS = 1_000;
const MAX_ATTEMPTS = 3;
/** What an entry costs besides its snapshot: its key, its bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 1024;
const CAPTURES_PER_IDENTITY = 2;
const CAPTURES_PER_DAEMON = 8;

type Cell =
  | { readonly kind: "empty" }
  | { readonly kind: "capturing"; readonly done: Promise<ShellSnapshot | undefined> }
  | { readonly kind: "ready"; readonly snapshot: ShellSnapshot }
  | { readonly kind: "failed"; readonly retryAt: number };

interface Entry {
  attempts: number;
  cell: Cell;
  bytes: number;
  /** When it was last used, in the store's own count: the smallest goes first. */
  lastUse: number;
}

/** One session's entries, least recently used first. */
class SessionSnapshots {
  readonly entries = new Map<string, Entry>();
  constructor(
    readonly identity: string,
    readonly session: WeakRef<object>,
  ) {}
}

/** At most `limit` holders at once; the others queue. */
class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }
  async take(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}

export class SnapshotCache {
  private readonly bySession = new WeakMap<object, SessionSnapshots>();
  /** Every session's entries, for the budgets; what is gone or ended is dropped when next looked at. */
  private readonly all = new Set<WeakRef<SessionSnapshots>>();
  private uses = 0;
  private readonly daemonSlots = new Slots(CAPTURES_PER_DAEMON);
  private readonly identitySlots = new Map<string, Slots>();

  constructor(
    /** Whether a session still exists (the registry knows it): an ended one's snapshots are dropped. */
    private readonly isLive: (session: object) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The snapshot for `key` in `session`: a cached one, the one a capture
   * already under way produces, or a new capture's. Undefined when the
   * capture failed (now or within the retry rules): run without a snapshot.
   */
  async get(session: object, identity: string, key: string, capture: () => Promise<ShellSnapshot | undefined>): Promise<ShellSnapshot | undefined> {
    const own = this.snapshotsOf(session, identity);
    const entry = this.lookup(own, key);
    const cell = entry.cell;
    switch (cell.kind) {
      case "ready":
        return cell.snapshot;
      case "failed":
        return undefined;
      case "capturing":
        return cell.done;
      case "empty": {
        const done = this.captureFor(own, key, entry, capture);
        entry.cell = { kind: "capturing", done };
        return done;
      }
    }
  }

  /** Bytes held by live sessions' snapshots: of one identity, or of all. */
  heldBytes(identity?: string): number {
    let bytes = 0;
    for (const own of this.liveSnapshots()) if (identity === undefined || own.identity === identity) for (const entry of own.entries.values()) bytes += entry.bytes;
    return bytes;
  }

  private snapshotsOf(session: object, identity: string): SessionSnapshots {
    let own = this.bySession.get(session);
    if (!own) {
      own = new SessionSnapshots(identity, new WeakRef(session));
      this.bySession.set(session, own);
      this.all.add(new WeakRef(own));
    }
    return own;
  }

  private lookup(own: SessionSnapshots, key: string): Entry {
    let entry = own.entries.get(key);
    if (entry) {
      const cell = entry.cell;
      if (cell.kind === "failed" && entry.attempts < MAX_ATTEMPTS && this.now() >= cell.retryAt) {
        entry.attempts++;
        entry.cell = { kind: "empty" };
      }
      own.entries.delete(key);
    } else {
      entry = { attempts: 1, cell: { kind: "empty" }, bytes: ENTRY_OVERHEAD_BYTES, lastUse: 0 };
    }
    entry.lastUse = ++this.uses;
    own.entries.set(key, entry);
    if (own.entries.size > MAX_ENTRIES_PER_SESSION) own.entries.delete(own.entries.keys().next().value!);
    return entry;
  }

  private async captureFor(own: SessionSnapshots, key: string, entry: Entry, capture: () => Promise<ShellSnapshot | undefined>): Promise<ShellSnapshot | undefined> {
    let slots = this.identitySlots.get(own.identity);
    if (!slots) this.identitySlots.set(own.identity, (slots = new Slots(CAPTURES_PER_IDENTITY)));
    await slots.take();
    await this.daemonSlots.take();
    let snapshot: ShellSnapshot | undefined;
    try {
      snapshot = await capture();
    } catch {
      snapshot = undefined;
    } finally {
      this.daemonSlots.give();
      slots.give();
      if (slots.idle) this.identitySlots.delete(own.identity);
    }
    entry.cell = snapshot ? { kind: "ready", snapshot } : { kind: "failed", retryAt: this.now() + RETRY_AFTER_MS };
    if (snapshot) {
      entry.bytes += snapshot.bytes;
      if (own.entries.get(key) === entry) this.trim(own.identity, entry);
    }
    return snapshot;
  }

  /** The sessions whose snapshots still count; the others are let go. */
  private *liveSnapshots(): Iterable<SessionSnapshots> {
    for (const reference of this.all) {
      const own = reference.deref();
      const session = own?.session.deref();
      if (own && session && this.isLive(session)) {
        yield own;
        continue;
      }
      this.all.delete(reference);
      if (own) own.entries.clear();
    }
  }

  /** Least recently used out (never `keep`, just made) until the identity's and the daemon's budgets hold. */
  private trim(identity: string, keep: Entry): void {
    const candidates: { own: SessionSnapshots; key: string; entry: Entry }[] = [];
    let identityBytes = 0;
    let totalBytes = 0;
    for (const own of this.liveSnapshots()) {
      for (const [key, entry] of own.entries) {
        totalBytes += entry.bytes;
        if (own.identity === identity) identityBytes += entry.bytes;
        if (entry !== keep) candidates.push({ own, key, entry });
      }
    }
    if (identityBytes <= MAX_BYTES_PER_IDENTITY && totalBytes <= MAX_BYTES) return;
    candidates.sort((a, b) => a.entry.lastUse - b.entry.lastUse);
    for (const { own, key, entry } of candidates) {
      const overTotal = totalBytes > MAX_BYTES;
      if (!overTotal && identityBytes <= MAX_BYTES_PER_IDENTITY) return;
      if (!overTotal && own.identity !== identity) continue;
      own.entries.delete(key);
      totalBytes -= entry.bytes;
      if (own.identity === identity) identityBytes -= entry.bytes;
    }
  }
}
