/**
 * Open connections per client (its identity, auth/identity.ts), so
 * one client cannot hold every socket the daemon can afford: each one may
 * keep up to --reply-queue-bytes of replies in memory. Checked before the
 * upgrade (HTTP 429) and counted from then until the socket closes, an
 * upgrade still waiting for its pace or its turn included; handshakes
 * racing each other through authorization can pass the check together, so
 * the bound is approximate by those in flight at one moment.
 */
export class ConnectionQuota {
  private readonly open = new Map<string, number>();

  constructor(private readonly perClient: number) {}

  allows(client: string): boolean {
    return (this.open.get(client) ?? 0) < this.perClient;
  }

  /** Counts a connection; call the result when it closes. */
  opened(client: string): () => void {
    this.open.set(client, (this.open.get(client) ?? 0) + 1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      const left = (this.open.get(client) ?? 1) - 1;
      if (left === 0) this.open.delete(client);
      else this.open.set(client, left);
    };
  }
}
