/**
 * A few slots shared by many owners, handed out in rotation: an owner
 * waiting for a slot gets the next one free after each owner ahead of it in
 * the rotation got one, however many its neighbours queued.
 *
 * The process host does its work one request at a time, in the order they
 * came: a start (a fork and exec, about a millisecond) holds every request
 * behind it, including another client's keystroke. Sent all at once, one
 * client's 200 starts put a quarter of a second between every other
 * client's input and its process. Through these slots at most `slots`
 * starts are at the host at a time (two keep it busy: one being spawned,
 * the next on its way), and owners take turns for them.
 */
type Grant = () => void;

export class FairSlots {
  /** Each waiting owner's grants, in order; the map's order is the rotation's. */
  private readonly waiting = new Map<unknown, Grant[]>();
  private busy = 0;

  constructor(private readonly slots: number) {}

  /** Runs `work` in a slot once `owner`'s turn for one comes; the slot is given back when it settles. */
  async run<T>(owner: unknown, work: () => Promise<T>): Promise<T> {
    if (this.busy < this.slots && this.waiting.size === 0) this.busy++;
    else await new Promise<void>((grant) => this.enqueue(owner, grant));
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private enqueue(owner: unknown, grant: Grant): void {
    const grants = this.waiting.get(owner);
    if (grants) grants.push(grant);
    else this.waiting.set(owner, [grant]);
  }

  /** The slot passes to the owner at the head of the rotation, which goes to its back with what it has left. */
  private release(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.busy--;
      return;
    }
    const [owner, grants] = next.value;
    this.waiting.delete(owner);
    const grant = grants.shift()!;
    if (grants.length > 0) this.waiting.set(owner, grants);
    grant();
  }
}
