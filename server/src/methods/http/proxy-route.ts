/**
 * Whether a request goes straight to its host or through the proxy the
 * daemon's environment names, decided per URL (so per redirect hop) as
 * reqwest decides it: HTTP_PROXY / HTTPS_PROXY (or lowercase), ALL_PROXY as
 * the fallback, NO_PROXY exempting hosts. Loopback URLs always go direct, as
 * in upstream's newest runner: a local MCP server's bearer token must never
 * pass through an ambient proxy (the 0.169.0 binary still proxies them).
 */
import { BlockList, isIP } from "node:net";

export type Environment = Readonly<Record<string, string | undefined>>;

export type Route =
  | { readonly kind: "direct" }
  | { readonly kind: "proxy"; readonly proxy: URL }
  /** A proxy execmux cannot speak (https://, socks5://): the request fails rather than bypass it. */
  | { readonly kind: "unsupported"; readonly proxy: string };

const DIRECT: Route = { kind: "direct" };

export function routeFor(url: URL, env: Environment): Route {
  const host = bareHost(url.hostname);
  if (isLoopback(host)) return DIRECT;
  const configured = proxyFor(url.protocol, env);
  if (!configured || bypassedByNoProxy(host, first(env, "NO_PROXY", "no_proxy") ?? "")) return DIRECT;
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(configured) ? configured : `http://${configured}`;
  if (!URL.canParse(withScheme)) return { kind: "unsupported", proxy: configured };
  const proxy = new URL(withScheme);
  return proxy.protocol === "http:" ? { kind: "proxy", proxy } : { kind: "unsupported", proxy: proxy.protocol };
}

/** `[::1]` -> `::1`: URL keeps IPv6 hosts in brackets, sockets and BlockList want them bare. */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, "$1");

/** Upstream's test: `localhost`, or an IP address that is loopback (127.0.0.0/8, ::1). */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return isIP(host) === 6 && LOOPBACK_V6.check(host, "ipv6");
}

const LOOPBACK_V6 = new BlockList();
LOOPBACK_V6.addAddress("::1", "ipv6");

function proxyFor(protocol: string, env: Environment): string | undefined {
  // Under CGI, HTTP_PROXY can be set by a request header (httpoxy): reqwest ignores it there.
  const cgi = env.REQUEST_METHOD !== undefined && env.REQUEST_METHOD !== "";
  const specific =
    protocol === "https:" ? first(env, "HTTPS_PROXY", "https_proxy") : cgi ? undefined : first(env, "HTTP_PROXY", "http_proxy");
  return specific ?? first(env, "ALL_PROXY", "all_proxy");
}

function first(env: Environment, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

/**
 * NO_PROXY as reqwest reads it: comma-separated; `*` matches everything; an
 * IP address or CIDR block matches hosts given as IPs in it; anything else
 * is a domain matching itself and its subdomains (a leading dot changes
 * nothing).
 */
export function bypassedByNoProxy(host: string, noProxy: string): boolean {
  const lowerHost = host.toLowerCase();
  const hostFamily = isIP(host);
  for (const raw of noProxy.split(",")) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return true;
    const [address, prefix] = entry.split("/", 2) as [string, string | undefined];
    const entryFamily = isIP(bareHost(address));
    if (entryFamily !== 0) {
      if (hostFamily !== entryFamily) continue;
      const type = entryFamily === 4 ? "ipv4" : "ipv6";
      const block = new BlockList();
      const bits = prefix === undefined ? undefined : Number(prefix);
      if (bits === undefined) block.addAddress(bareHost(address), type);
      else if (Number.isInteger(bits) && bits >= 0 && bits <= (entryFamily === 4 ? 32 : 128)) block.addSubnet(bareHost(address), bits, type);
      else continue;
      if (block.check(host, type)) return true;
      continue;
    }
    const domain = entry.replace(/^\./, "");
    if (lowerHost === domain || lowerHost.endsWith(`.${domain}`)) return true;
  }
  return false;
}
