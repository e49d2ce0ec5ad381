/**
 * Which addresses count as local or private: upstream's `is_non_public_ip`
 * (loopback, RFC 1918, link-local, CGNAT, documentation and benchmarking
 * ranges, multicast, reserved; IPv6 loopback, unique-local, link-local,
 * multicast, and IPv4 mapped into IPv6 by the IPv4 rules). The proxy never
 * connects to one unless the policy names it (or allows local binding).
 */
import { BlockList, isIP } from "node:net";

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, "ipv6");
}

/** IPv4 written inside IPv6 (`::ffff:10.0.0.1`): judged as the IPv4 address. */
function mappedIpv4(address: string): string | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

export function isNonPublicAddress(address: string): boolean {
  const unscoped = address.replace(/%.*$/, "");
  const family = isIP(unscoped);
  if (family === 4) return NON_PUBLIC.check(unscoped, "ipv4");
  if (family === 6) {
    const v4 = mappedIpv4(unscoped);
    return v4 ? NON_PUBLIC.check(v4, "ipv4") : NON_PUBLIC.check(unscoped, "ipv6");
  }
  return false;
}

/** `localhost` (any case, trailing dot) or a loopback literal. */
export function isLoopbackHost(host: string): boolean {
  if (host === "localhost") return true;
  const unscoped = host.replace(/%.*$/, "");
  if (isIP(unscoped) === 4) return unscoped.startsWith("127.");
  return unscoped === "::1" || mappedIpv4(unscoped)?.startsWith("127.") === true;
}
