import { isIP } from "node:net";

/** Whether `host` (a name or an IP, IPv6 without brackets) is this machine's loopback. */
export function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}
