/**
 * One request at a time per key, shared by everyone who asked while it was
 * not yet sent. A caller never gets an answer to a request sent before it
 * asked (a listing must be at least as new as the output the client saw
 * before asking for it): one arriving while a request is on its way waits
 * for the next one, which starts when that answer comes and is shared by
 * every caller that arrived meanwhile. So a flood of requests for one key
 * costs the process host at most two at a time, and the link that carries
 * every session's input and output never fills with them.
 */
interface Flight<V> {
  running: Promise<V>;
  /** Callers that arrived after `running` was sent: served by the request that follows it. */
  next?: { promise: Promise<V>; start: () => void };
}

export class FreshSingleFlight<K, V> {
  private readonly flights = new Map<K, Flight<V>>();

  constructor(private readonly fetch: (key: K) => Promise<V>) {}

  run(key: K): Promise<V> {
    const flight = this.flights.get(key);
    if (!flight) return this.launch(key, this.fetch(key));
    if (!flight.next) {
      let start!: () => void;
      const promise = new Promise<V>((resolve, reject) => {
        start = () => this.fetch(key).then(resolve, reject);
      });
      flight.next = { promise, start };
    }
    return flight.next.promise;
  }

  private launch(key: K, running: Promise<V>): Promise<V> {
    const flight: Flight<V> = { running };
    this.flights.set(key, flight);
    const settle = () => {
      const next = flight.next;
      if (!next) {
        this.flights.delete(key);
        return;
      }
      next.start();
      void this.launch(key, next.promise);
    };
    running.then(settle, settle);
    return running;
  }
}
