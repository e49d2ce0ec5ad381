/**
 * Read slabs (output-buffers.ts) and large JSON output frames (envelope.ts)
 * are reused once nothing refers to their bytes any more. A 256 MiB stream reads into about a thousand 256 KiB
 * slabs. Allocated afresh, they are external memory, which V8 counts against
 * its old-generation limit: once that limit had been recomputed (after a few
 * streams), the daemon ran a full mark-compact about every 45 ms while output
 * flowed, and binary streaming fell from about 1,000 to 600 MiB/s.
 *
 * Whoever keeps a chunk beyond the call that handed it over retains it and
 * releases it when done: the coalescer (until the end of the turn), the
 * output log (until eviction), a process's unannounced events, and Outbound
 * (until the socket has written the frame). The reader holds the slab it is
 * filling, and the connection the JSON frame it is handing to Outbound. A slab goes back to the pool when the count reaches zero.
 * A missed release only leaves a slab to the garbage collector; a release
 * too early would hand bytes that are still wanted to the next read, which
 * is why the tests poison every slab that comes back (poisonReturnedSlabs).
 */

/** Enough for a few streaming processes, per slab size; beyond it, returned slabs are left to the garbage collector. */
const POOLED_SLABS = 32;
/** A pool unused this long is emptied: a daemon that streamed once does not keep the memory. */
const IDLE_TRIM_MS = 10_000;
const POISON_BYTE = 0xee;

const holders = new WeakMap<ArrayBufferLike, { count: number }>();
/** Returned slabs by size: read slabs (output-buffers.ts) and JSON output frames (envelope.ts). */
const free = new Map<number, Buffer[]>();
let poison = false;
let trimTimer: NodeJS.Timeout | undefined;

/** A slab of `bytes`, held once (by the caller: a reader, or the JSON frame encoder's caller). */
export function takeSlab(bytes: number): Buffer {
  const slab = free.get(bytes)?.pop() ?? Buffer.allocUnsafeSlow(bytes);
  holders.set(slab.buffer, { count: 1 });
  return slab;
}

/** Keeps the slab under `view` (any view of it) from being reused; a no-op for other buffers. */
export function retainSlab(view: Uint8Array): boolean {
  const held = holders.get(view.buffer);
  if (held === undefined) return false;
  held.count++;
  return true;
}

/** Gives up one hold taken by takeSlab or retainSlab; the last one returns the slab to the pool. */
export function releaseSlab(view: Uint8Array): void {
  const held = holders.get(view.buffer);
  if (held === undefined) return;
  if (--held.count > 0) return;
  holders.delete(view.buffer);
  const slab = Buffer.from(view.buffer);
  let pooled = free.get(slab.length);
  if (pooled === undefined) free.set(slab.length, (pooled = []));
  if (pooled.length >= POOLED_SLABS) return;
  if (poison) slab.fill(POISON_BYTE);
  pooled.push(slab);
  if (trimTimer) trimTimer.refresh();
  else trimTimer = setTimeout(trimIdlePool, IDLE_TRIM_MS).unref();
}

function trimIdlePool(): void {
  trimTimer = undefined;
  free.clear();
}

/** Tests: overwrite every returned slab, so bytes released too early show up as corrupt output. */
export function poisonReturnedSlabs(on: boolean): void {
  poison = on;
}
