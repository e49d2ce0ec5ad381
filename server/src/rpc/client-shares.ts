/**
 * Each client's share of the event loop, as the turns measured it: the
 * time its units of work took, decayed over a window. While another client
 * within its share is active, a client past its share waits
 * (turn-scheduler.ts), so the daemon is never wholly one flooding client's:
 * on a machine a flood saturates, the daemon's idle time is what lets a
 * bystander's keystroke through at once, and the flood's client, reading
 * fewer replies, leaves the cores to the others too. Clients all past their
 * shares hold none of each other: the turns' rotation shares the loop
 * among them, and none of it goes idle.
 *
 * The turns keep two of these: one by client (identity) and one by
 * connection, so that without tokens, where every client is the one
 * anonymous identity, a flooding connection is still told from a
 * bystander's.
 *
 * A ratio of the daemon's own thread, not a rate: the same on any CPU.
 */

/**
 * The most of the event loop's time a client's units may take while a
 * lighter client is active. On the bench's 2-core VM, beside a flood of
 * `process/list`s, a third held a bystander's echo to 12-23 ms at p99, a
 * fifth to 7-9.5 ms and a sixth to 5-6 ms (docs/benchmarks.md, section 8).
 */
export const CLIENT_SHARE = 1 / 6;

/** The window the shares are measured over: an exponential decay with this time constant. */
export const SHARE_WINDOW_MS = 100;

/** A client's decayed unit time past which it is past its share: a constant fraction of the window decays to this. */
const ALLOWED_MS = CLIENT_SHARE * SHARE_WINDOW_MS;

interface Account {
  /** Unit time, in ms, decayed to `at`. */
  spent: number;
  at: number;
  /** When a unit of it last ran or began to wait. */
  activeAt: number;
}

/** The two accounts within their shares whose activity counts longest, as found at `at`. */
interface Lightest {
  readonly at: number;
  readonly first: unknown;
  readonly firstUntil: number;
  readonly secondUntil: number;
}

export class ClientShares {
  private readonly accounts = new Map<unknown, Account>();
  /** Found again after any charge or touch, or a millisecond later: a round asks it for every owner waiting. */
  private lightest: Lightest | undefined;

  constructor(private readonly now: () => number) {}

  /** `client` has work: it counts as active (another client past its share then waits for it). */
  touch(client: unknown): void {
    this.account(client).activeAt = this.now();
    this.lightest = undefined;
  }

  /** A unit of `client` took `ms`. */
  charge(client: unknown, ms: number): void {
    const account = this.account(client);
    account.spent += ms;
    account.activeAt = this.now();
    this.lightest = undefined;
  }

  /** True while `client` is past its share and another client, within its own, was active within the window. */
  overShare(client: unknown): boolean {
    const account = this.accounts.get(client);
    return account !== undefined && this.pastShare(account) && this.lighterActiveMs(client) > 0;
  }

  /**
   * How long until `client` may run again, in ms: 0 unless it is past its
   * share (overShare); else until it is within, or until no lighter client
   * has been active for a window, whichever comes first.
   */
  msUntilWithin(client: unknown): number {
    if (!this.overShare(client)) return 0;
    const decayMs = SHARE_WINDOW_MS * Math.log(this.spentNow(this.accounts.get(client)!) / ALLOWED_MS);
    return Math.min(decayMs, this.lighterActiveMs(client));
  }

  /** How much longer another client within its share counts as active (0: none does). */
  private lighterActiveMs(client: unknown): number {
    const now = this.now();
    let lightest = this.lightest;
    if (lightest === undefined || now - lightest.at >= 1) lightest = this.lightest = this.findLightest(now);
    return Math.max(0, (lightest.first === client ? lightest.secondUntil : lightest.firstUntil) - now);
  }

  private findLightest(now: number): Lightest {
    let first: unknown;
    let firstUntil = 0;
    let secondUntil = 0;
    for (const [client, account] of this.accounts) {
      const until = account.activeAt + SHARE_WINDOW_MS;
      if (until <= now || until <= secondUntil || this.pastShare(account)) continue;
      if (until > firstUntil) {
        secondUntil = firstUntil;
        first = client;
        firstUntil = until;
      } else secondUntil = until;
    }
    return { at: now, first, firstUntil, secondUntil };
  }

  private pastShare(account: Account): boolean {
    return this.spentNow(account) > ALLOWED_MS;
  }

  private spentNow(account: Account): number {
    const now = this.now();
    account.spent *= Math.exp((account.at - now) / SHARE_WINDOW_MS);
    account.at = now;
    return account.spent;
  }

  private account(client: unknown): Account {
    let account = this.accounts.get(client);
    if (account) {
      this.spentNow(account);
      return account;
    }
    this.forgetIdle();
    account = { spent: 0, at: this.now(), activeAt: this.now() };
    this.accounts.set(client, account);
    return account;
  }

  /** `client` is gone (a connection closed): its account goes with it. */
  forget(client: unknown): void {
    this.accounts.delete(client);
    this.lightest = undefined;
  }

  /** Clients idle for ten windows are forgotten: the accounts stay as many as the clients at work. */
  private forgetIdle(): void {
    const before = this.now() - 10 * SHARE_WINDOW_MS;
    for (const [client, { activeAt }] of this.accounts) if (activeAt < before) this.accounts.delete(client);
  }
}
