/** A process's whole output as a client saw it, for tests that check nothing was lost, doubled or reordered. */
import type { ProcessHandle } from "@execmux/client";

/** Collects a handle's output, with the seq of each event, until it closes. */
export async function collect(handle: ProcessHandle): Promise<{ data: Buffer; seqs: number[]; exitCode: number }> {
  const chunks: Uint8Array[] = [];
  const seqs: number[] = [];
  for await (const event of handle) {
    seqs.push(event.seq);
    chunks.push(event.data);
  }
  return { data: Buffer.concat(chunks), seqs, exitCode: await handle.wait() };
}

/** True when no seq came twice or out of order. */
export const strictlyIncreasing = (seqs: number[]) => seqs.every((seq, index) => index === 0 || seq > seqs[index - 1]!);
