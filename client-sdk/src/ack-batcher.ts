/**
 * Credit flow control, the client's side: output a process delivered is
 * acknowledged (`process/ack`) in batches.
 *
 * Credit below a quarter of the client's own window waits ACK_DELAY_MS, so a
 * stream at hundreds of MiB/s costs the daemon about one ack a millisecond
 * instead of one per frame. While a socket is shared the daemon lets each
 * process run only a small window ahead of its acks, so the delay also holds
 * a flooding process back, which is what keeps another process's keystroke
 * echo fast on a busy machine (`npm run bench`, section 3).
 */

const ACK_DELAY_MS = 1;

export class AckBatcher {
  private readonly unacked = new Map<string, number>();
  private readonly delayed = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param everyBytes smallest ack: a quarter of the smallest window the daemon may apply
   * @param nowBytes credit that goes out without delay: a quarter of the client's own window
   */
  constructor(
    private readonly send: (processId: string, bytes: number) => void,
    private readonly everyBytes: number,
    private readonly nowBytes: number,
  ) {}

  /** `bytes` more of a process's output were consumed. */
  add(processId: string, bytes: number): void {
    const total = (this.unacked.get(processId) ?? 0) + bytes;
    this.unacked.set(processId, total);
    if (total >= this.nowBytes) this.flush(processId);
    else if (total >= this.everyBytes) {
      this.delayed.add(processId);
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        for (const delayed of this.delayed) this.flush(delayed);
      }, ACK_DELAY_MS);
    }
  }

  /** The process closed: what it still has unacknowledged no longer matters. */
  forget(processId: string): void {
    this.unacked.delete(processId);
    this.delayed.delete(processId);
  }

  /** Forgets all credit: the socket is gone, and a new one starts counting from zero. */
  reset(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.unacked.clear();
    this.delayed.clear();
  }

  private flush(processId: string): void {
    this.delayed.delete(processId);
    const bytes = this.unacked.get(processId) ?? 0;
    this.unacked.delete(processId);
    if (bytes > 0) this.send(processId, bytes);
  }
}
