/** A minimal typed event emitter that runs in Node and browsers alike. */
type AnyListener = (...args: never[]) => void;

export class Emitter<Events extends Record<string, unknown[]>> {
  private readonly listeners = new Map<keyof Events, Set<AnyListener>>();

  on<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    const stored = listener as unknown as AnyListener;
    set.add(stored);
    return () => set.delete(stored);
  }

  emit<E extends keyof Events>(event: E, ...args: Events[E]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) (listener as unknown as (...args: Events[E]) => void)(...args);
  }
}
