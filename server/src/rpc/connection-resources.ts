/**
 * State a method family keeps per connection (open file-read handles, active
 * HTTP body streams), created on first use and disposed when the connection
 * closes. The connection never needs to know what the families keep.
 */
export interface Disposable {
  dispose(): void;
}

export class ConnectionResources {
  private readonly entries = new Map<symbol, Disposable>();
  private disposed = false;

  /** The family's state for this connection, created by `create` the first time. */
  get<T extends Disposable>(key: symbol, create: () => T): T {
    let entry = this.entries.get(key) as T | undefined;
    if (!entry) {
      entry = create();
      if (this.disposed) entry.dispose();
      else this.entries.set(key, entry);
    }
    return entry;
  }

  disposeAll(): void {
    this.disposed = true;
    for (const entry of this.entries.values()) entry.dispose();
    this.entries.clear();
  }
}
