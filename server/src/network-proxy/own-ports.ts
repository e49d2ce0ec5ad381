/**
 * The TCP ports this daemon process is listening on right now (its
 * WebSocket listener, whatever port 0 picked, and any other it opened):
 * its listening sockets' inodes, from /proc/self/fd, looked up in
 * /proc/self/net/tcp and tcp6. Read when a proxied connection heads for an
 * address of this machine, never at rest.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

const LISTEN = "0A";

export function ownListeningPorts(): Set<number> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync("/proc/self/fd")) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
        if (match) inodes.add(match[1]!);
      } catch {
        // Closed while we looked.
      }
    }
  } catch {
    return new Set();
  }
  const ports = new Set<number>();
  for (const table of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (fields.length < 10 || fields[3] !== LISTEN || !inodes.has(fields[9]!)) continue;
      ports.add(parseInt(fields[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}
