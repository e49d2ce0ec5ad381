/**
 * Turns at the event loop, shared fairly by every connection of the daemon.
 *
 * Work a connection does on its client's behalf (handling one of its
 * frames, building one of its replies) runs at once while the event loop's
 * current turn has handling time left and no other connection is waiting.
 * Otherwise it waits for its connection's turn: waiting connections are
 * served in rotation, one unit of work each, in rounds that run after the
 * event loop's I/O (setImmediate) and stop when the round's time is spent,
 * so the daemon reads its sockets and its processes' output between rounds.
 *
 * So one connection's backlog, or eight connections' backlogs together,
 * delay another connection's frame by one unit of work per waiting
 * connection, never by their whole backlogs nor by a slice of time each:
 * a connection that starts waiting joins the rotation behind those already
 * in it, and each of them gets one unit before it comes round.
 *
 * And no client's units take more than its share of the event loop while
 * a lighter client is active, nor one connection's while a lighter
 * connection is (client-shares.ts, each counted on its own: without tokens
 * every client is the one anonymous identity, and a connection of the same
 * client is all a bystander can be told apart by). Past a share, an owner
 * keeps its place but is passed over, and when only such owners wait the
 * loop rests until the first of them may run again.
 */
import { ClientShares } from "./client-shares.js";

/**
 * Handling time per event-loop turn, all connections together: short enough
 * that a bystander's frame waits at most about this long (plus one unit of
 * work per waiting connection) behind any number of busy sockets.
 */
export const TURN_BUDGET_MS = 1;

/**
 * The one place in the rotation that a client's connections coming and
 * going share (a client: its identity, as the quotas count it): an upgrade,
 * a new connection's frames until its `initialize`, and the session work
 * of a closed connection. So thirty sockets one client opens (or drops) at
 * once cost a bystander one unit per round, as one busy connection does,
 * not thirty; one client's churn never queues another's handshakes behind
 * it; and a client's are done in the order they came, so a session is
 * detached from a dropped socket before a later resume of it is handled.
 */
export function lifecycleOf(client: string): string {
  return `${LIFECYCLE}${client}`;
}

const LIFECYCLE = "connections of ";

/** Whose client's share a unit of `owner` counts against: a connection's client (its `client`), or the client whose lifecycle place it is. */
function clientOf(owner: unknown): unknown {
  if (typeof owner === "string") return owner.startsWith(LIFECYCLE) ? owner.slice(LIFECYCLE.length) : owner;
  return (owner as { readonly client?: unknown } | null)?.client ?? owner;
}

type Unit = () => void;

export class TurnScheduler {
  /** Each waiting owner's units, in order; the map's order is the rotation's. */
  private readonly waiting = new Map<unknown, Unit[]>();
  /** When this turn's handling began; undefined between turns. */
  private turnStarted: number | undefined;
  private roundScheduled = false;
  /** Set while only owners past their clients' shares wait: the next round comes when the first may run. */
  private rest: NodeJS.Timeout | undefined;
  private restUntil = 0;
  /** Time taken by units run inside the one running (runCharged), and how deep that is. */
  private nestedMs = 0;
  private unitDepth = 0;
  /** Shares by client (identity) and by owner (a connection, or a client's lifecycle place). */
  private readonly clientShares: ClientShares;
  private readonly ownerShares: ClientShares;

  constructor(
    private readonly budgetMs = TURN_BUDGET_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.clientShares = new ClientShares(now);
    this.ownerShares = new ClientShares(now);
  }

  /** Owners with work waiting for their turn. */
  get waitingOwners(): number {
    return this.waiting.size;
  }

  /** True when `owner` may do a unit of work now: the turn has time left, nobody waits for theirs, and its client is within its share. */
  mayRun(owner: unknown): boolean {
    return this.waiting.size === 0 && this.hasTime() && !this.overShare(owner);
  }

  /** Runs `unit` now when allowed (mayRun), else queues it for `owner`'s next turn. */
  run(owner: unknown, unit: Unit): void {
    if (this.mayRun(owner)) this.runCharged(owner, unit);
    else this.enqueue(owner, unit);
  }

  /** Queues `unit` behind `owner`'s other waiting units; the owner joins the rotation's end if it was not in it. */
  enqueue(owner: unknown, unit: Unit): void {
    const units = this.waiting.get(owner);
    if (units) units.push(unit);
    else this.waiting.set(owner, [unit]);
    this.clientShares.touch(clientOf(owner));
    this.ownerShares.touch(owner);
    this.scheduleRound();
  }

  /** `owner` is gone (its connection closed): its waiting units run now, so nothing waits on it forever. */
  forget(owner: unknown): void {
    const units = this.waiting.get(owner);
    this.waiting.delete(owner);
    this.ownerShares.forget(owner);
    for (const unit of units ?? []) unit();
  }

  private hasTime(): boolean {
    const now = this.now();
    if (this.turnStarted === undefined) {
      this.turnStarted = now;
      // The turn ends with this pass of the event loop.
      setImmediate(() => {
        if (!this.roundScheduled) this.turnStarted = undefined;
      });
      return true;
    }
    return now - this.turnStarted < this.budgetMs;
  }

  private scheduleRound(): void {
    if (this.roundScheduled) return;
    this.roundScheduled = true;
    setImmediate(() => this.round());
  }

  /**
   * Runs `unit` at once, timed and charged to `owner` and its client: the
   * rotation's units, and work a connection does outside it (a frame
   * handled while nobody waited). A unit run inside another (a connection's
   * frame handled while another's reply was sent) is its own client's time,
   * not the outer one's.
   */
  runCharged(owner: unknown, unit: Unit): void {
    const started = this.now();
    const outerNested = this.nestedMs;
    this.nestedMs = 0;
    this.unitDepth++;
    try {
      unit();
    } finally {
      const took = this.now() - started;
      this.clientShares.charge(clientOf(owner), took - this.nestedMs);
      this.ownerShares.charge(owner, took - this.nestedMs);
      // What the unit around this one took inside it; nothing is around a unit the round or the gate ran.
      this.nestedMs = --this.unitDepth > 0 ? outerNested + took : 0;
    }
  }

  /**
   * One unit per waiting owner in rotation, until this turn's time is spent;
   * the rest waits for the next round. Owners whose clients are past their
   * shares are passed over where they are (a client found past it stays so
   * for the rest of the round; one within is asked again at each unit, as
   * its units may take it past).
   */
  private round(): void {
    this.roundScheduled = false;
    this.turnStarted = this.now();
    const held = new Set<unknown>();
    const isHeld = (owner: unknown) => {
      if (held.has(owner)) return true;
      if (!this.overShare(owner)) return false;
      held.add(owner);
      return true;
    };
    while (this.now() - this.turnStarted < this.budgetMs) {
      let next: [unknown, Unit[]] | undefined;
      for (const entry of this.waiting) {
        if (isHeld(entry[0])) continue;
        next = entry;
        break;
      }
      if (!next) break;
      const [owner, units] = next;
      this.waiting.delete(owner);
      const unit = units.shift()!;
      // Back of the rotation with what it has left; a unit it queues meanwhile joins those.
      if (units.length > 0) this.waiting.set(owner, units);
      try {
        this.runCharged(owner, unit);
      } catch {
        // A unit's failure is its connection's (units guard themselves); the round goes on.
      }
    }
    this.turnStarted = undefined;
    if (this.waiting.size === 0) return;
    let restMs = Number.POSITIVE_INFINITY;
    for (const owner of this.waiting.keys()) {
      restMs = Math.min(restMs, this.msUntilWithin(owner));
      if (restMs === 0) break;
    }
    if (restMs === 0) this.scheduleRound();
    else this.restFor(restMs);
  }

  /** Past its client's share or its own (client-shares.ts). */
  private overShare(owner: unknown): boolean {
    return this.clientShares.overShare(clientOf(owner)) || this.ownerShares.overShare(owner);
  }

  /** How long until `owner` is within both its shares (0: it is). */
  private msUntilWithin(owner: unknown): number {
    return Math.max(this.clientShares.msUntilWithin(clientOf(owner)), this.ownerShares.msUntilWithin(owner));
  }

  /** Only owners past their shares wait: the next round comes when the first of them may run again. */
  private restFor(ms: number): void {
    const until = this.now() + Math.max(1, ms);
    if (this.rest !== undefined && this.restUntil <= until) return;
    clearTimeout(this.rest);
    this.restUntil = until;
    this.rest = setTimeout(() => {
      this.rest = undefined;
      if (this.waiting.size > 0) this.scheduleRound();
    }, Math.max(1, Math.ceil(ms))).unref();
  }
}
