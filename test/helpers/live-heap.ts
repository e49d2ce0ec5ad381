/**
 * The live JavaScript heap of another Node process: what is left after a
 * full garbage collection, asked through its inspector. A heap read at an
 * arbitrary moment also counts garbage not yet collected, which moved by
 * tens of MiB between runs; the live heap moves only with what is kept.
 *
 * The process must have been started with NODE_OPTIONS=--inspect-port=0
 * (INSPECTABLE_ENV): SIGUSR1 then opens its inspector on a free loopback
 * port, found here among the process's listening sockets.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { vi } from "vitest";
import { WebSocket } from "ws";

/** Environment for a daemon that can be inspected. */
export const INSPECTABLE_ENV = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --inspect-port=0`.trim() };

/** Ports of the IPv4 TCP sockets `pid` listens on. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const line of readFileSync(`/proc/${pid}/net/tcp`, "latin1").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    // State 0A is LISTEN; field 9 is the socket's inode.
    if (fields[3] === "0A" && inodes.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(":")[1]!, 16));
  }
  return ports;
}

/** Inspector ports already opened, by pid: the process may listen on ports of its own too (a daemon does). */
const inspectorPorts = new Map<number, number>();

async function inspectorUrl(pid: number): Promise<string> {
  let port = inspectorPorts.get(pid);
  if (port === undefined) {
    const own = new Set(listeningPorts(pid));
    process.kill(pid, "SIGUSR1");
    port = await vi.waitFor(
      () => {
        const found = listeningPorts(pid).find((candidate) => !own.has(candidate));
        if (found === undefined) throw new Error(`process ${pid} opened no inspector (was it started with INSPECTABLE_ENV?)`);
        return found;
      },
      { timeout: 10_000 },
    );
    inspectorPorts.set(pid, port);
  }
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  return targets[0]!.webSocketDebuggerUrl;
}

/** Bytes of heap in use in `pid` right after a full collection. */
export async function liveHeapBytes(pid: number): Promise<number> {
  const socket = new WebSocket(await inspectorUrl(pid));
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  let nextId = 1;
  const call = (method: string, params: object = {}) =>
    new Promise<{ result?: { value?: unknown } }>((resolve, reject) => {
      const id = nextId++;
      const onMessage = (data: Buffer) => {
        const message = JSON.parse(data.toString()) as { id?: number; result?: { result?: { value?: unknown } }; error?: unknown };
        if (message.id !== id) return;
        socket.off("message", onMessage);
        if (message.error) reject(new Error(JSON.stringify(message.error)));
        else resolve(message.result ?? {});
      };
      socket.on("message", onMessage);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    // Twice: the first collection can leave objects whose finalizers free more.
    await call("HeapProfiler.collectGarbage");
    await call("HeapProfiler.collectGarbage");
    const evaluated = await call("Runtime.evaluate", { expression: "process.memoryUsage().heapUsed", returnByValue: true });
    return Number(evaluated.result?.value);
  } finally {
    socket.close();
  }
}
