/**
 * Upstream's host patterns (codex network-proxy `policy.rs`), matched as it
 * matches them: hosts are lowercased, trailing dots and `[ ]` around IPv6
 * literals dropped; `example.com` matches that host, `*.example.com` its
 * subdomains only, `**.example.com` both, `*` every host (in the allow list
 * only), and `*`/`?` inside a label are globs (`region*.example.com`).
 */
import { isIP } from "node:net";

/** Lowercase, no port, no brackets, no trailing dot (upstream's `normalize_host`). */
export function normalizeHost(input: string): string {
  let host = input.trim();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end > 0) host = host.slice(1, end);
  } else if ((host.match(/:/g) ?? []).length === 1) {
    host = host.slice(0, host.indexOf(":"));
  }
  host = host.toLowerCase().replace(/\.+$/, "");
  // A scoped IPv6 literal keeps its zone, written with a bare `%`.
  const zoned = /^([^%]+)%(?:25)?(.+)$/.exec(host);
  if (zoned && isIP(zoned[1]!) === 6) return `${canonicalIpv6(zoned[1]!)}%${zoned[2]}`;
  return isIP(host) === 6 ? canonicalIpv6(host) : host;
}

/** One spelling per IPv6 address (`0:0:0:0:0:0:0:1` is `::1`), so rules and guards compare like with like. */
function canonicalIpv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

export class HostPatternError extends Error {}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "i");
}

/** The globs one pattern stands for: `**.d` is `d` and `?*.d`; `*.d` is `?*.d`. */
function expand(pattern: string): string[] {
  if (pattern === "*") return ["*"];
  if (pattern.startsWith("**.")) {
    const domain = normalizeHost(pattern.slice(3));
    return [domain, `?*.${domain}`];
  }
  if (pattern.startsWith("*.")) return [`?*.${normalizeHost(pattern.slice(2))}`];
  return [normalizeHost(pattern)];
}

/** Upstream refuses brackets except around an IPv6 literal (and `[*]`). */
function checkBrackets(pattern: string): void {
  if (!/[[\]]/.test(pattern)) return;
  const inner = /^\[([^\]]*)\]$/.exec(pattern.trim())?.[1];
  const literal = inner?.replace(/%(25)?.*$/, "");
  if (inner === "*" || (literal !== undefined && isIP(literal) === 6)) return;
  throw new HostPatternError(`brackets are only supported for IPv6 literals or [*]: ${pattern}`);
}

export class HostPatternSet {
  private readonly exact = new Set<string>();
  private readonly globs: RegExp[] = [];

  /** `listName` names the list in upstream's words when `*` is refused (the deny list). */
  constructor(patterns: readonly string[], options: { allowGlobalWildcard: boolean; listName: string }) {
    for (const pattern of patterns) {
      checkBrackets(pattern);
      const candidates = expand(pattern.trim());
      if (!options.allowGlobalWildcard && candidates.includes("*")) {
        throw new HostPatternError(
          `invalid value for ${options.listName}: ${pattern.trim()} (allowed exact hosts or scoped wildcards like *.example.com or **.example.com)`,
        );
      }
      for (const candidate of candidates) {
        if (/[*?]/.test(candidate)) this.globs.push(globToRegExp(candidate));
        else this.exact.add(candidate);
      }
    }
  }

  matches(host: string): boolean {
    const normalized = normalizeHost(host);
    return normalized !== "" && (this.exact.has(normalized) || this.globs.some((glob) => glob.test(normalized)));
  }

  /** Whether an entry names this very host (not through a wildcard): what lets a local address through. */
  namesExactly(host: string): boolean {
    return this.exact.has(normalizeHost(host));
  }
}
