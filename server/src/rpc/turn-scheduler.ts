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
 */

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
  return `connections of ${client}`;
}

type Unit = () => void;

export class TurnScheduler {
  /** Each waiting owner's units, in order; the map's order is the rotation's. */
  private readonly waiting = new Map<unknown, Unit[]>();
  /** When this turn's handling began; undefined between turns. */
  private turnStarted: number | undefined;
  private roundScheduled = false;

  constructor(
    private readonly budgetMs = TURN_BUDGET_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Owners with work waiting for their turn. */
  get waitingOwners(): number {
    return this.waiting.size;
  }

  /** True when `owner` may do a unit of work now: the turn has time left and nobody waits for theirs. */
  mayRun(): boolean {
    return this.waiting.size === 0 && this.hasTime();
  }

  /** Runs `unit` now when allowed (mayRun), else queues it for `owner`'s next turn. */
  run(owner: unknown, unit: Unit): void {
    if (this.mayRun()) unit();
    else this.enqueue(owner, unit);
  }

  /** Queues `unit` behind `owner`'s other waiting units; the owner joins the rotation's end if it was not in it. */
  enqueue(owner: unknown, unit: Unit): void {
    const units = this.waiting.get(owner);
    if (units) units.push(unit);
    else this.waiting.set(owner, [unit]);
    this.scheduleRound();
  }

  /** `owner` is gone (its connection closed): its waiting units run now, so nothing waits on it forever. */
  forget(owner: unknown): void {
    const units = this.waiting.get(owner);
    this.waiting.delete(owner);
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

  /** One unit per waiting owner in rotation, until this turn's time is spent; the rest waits for the next round. */
  private round(): void {
    this.roundScheduled = false;
    this.turnStarted = this.now();
    while (this.waiting.size > 0 && this.now() - this.turnStarted < this.budgetMs) {
      const [owner, units] = this.waiting.entries().next().value as [unknown, Unit[]];
      this.waiting.delete(owner);
      const unit = units.shift()!;
      // Back of the rotation with what it has left; a unit it queues meanwhile joins those.
      if (units.length > 0) this.waiting.set(owner, units);
      try {
        unit();
      } catch {
        // A unit's failure is its connection's (units guard themselves); the round goes on.
      }
    }
    this.turnStarted = undefined;
    if (this.waiting.size > 0) this.scheduleRound();
  }
}
