/**
 * Which names the daemon answers to in the `Host` header. DNS rebinding
 * works by pointing a name the attacker owns at 127.0.0.1: the browser then
 * sends the attacker's name as Host and as Origin, so an Origin check alone
 * passes. Refusing unknown names stops it; a rebinding needs a name, so IP
 * literals are always fine, and so are `localhost` and `*.localhost`, which
 * browsers resolve to loopback themselves.
 */
import { isIPv4, isIPv6 } from "node:net";

/**
 * Whether `name` is an IP address. Only a name with a colon is tried as
 * IPv6: node's IPv6 pattern takes milliseconds to compile on first use,
 * which every daemon would otherwise pay on its first request.
 */
function isIpLiteral(name: string): boolean {
  return name.includes(":") ? isIPv6(name) : isIPv4(name);
}

/** The host name of a Host header value (or of an address): lower case, without port, brackets or a trailing dot. */
export function hostNameOf(host: string): string {
  const trimmed = host.trim().toLowerCase();
  // More than one colon and no brackets: a bare IPv6 address (as --listen may give one), never name:port.
  if (!trimmed.startsWith("[") && trimmed.indexOf(":") !== trimmed.lastIndexOf(":")) return trimmed;
  const name = trimmed.startsWith("[") ? trimmed.slice(1, trimmed.indexOf("]")) : trimmed.replace(/:\d*$/, "");
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

export class HostAllowList {
  private readonly names = new Set<string>();
  /** `*.example.com` entries, kept as `.example.com`. */
  private readonly suffixes: string[] = [];
  private readonly any: boolean;

  /**
   * @param listenHost the address the daemon listens on (a name given there is its own)
   * @param configured `--allowed-hosts`: comma-separated names, `*.domain` for its subdomains, `*` for any
   */
  constructor(listenHost: string, configured: string) {
    const entries = configured.split(",").map((entry) => entry.trim().toLowerCase()).filter(Boolean);
    this.any = entries.includes("*");
    for (const entry of [hostNameOf(listenHost), "localhost", ...entries]) {
      if (entry.startsWith("*.")) this.suffixes.push(entry.slice(1));
      else this.names.add(hostNameOf(entry));
    }
    this.suffixes.push(".localhost");
  }

  /** True for a Host the daemon answers to; a request without one is not from a browser. */
  allows(host: string | undefined): boolean {
    if (this.any || host === undefined) return true;
    const name = hostNameOf(host);
    if (isIpLiteral(name) || this.names.has(name)) return true;
    return this.suffixes.some((suffix) => name.endsWith(suffix) && name.length > suffix.length);
  }
}
