/**
 * The domain policy of one executor-local proxy, decided as upstream's
 * proxy decides (what the 0.171 binary answered for each case): the deny
 * list wins; a local or private literal (or `localhost`) needs an entry that
 * names it exactly unless local binding is allowed; a host no allow entry
 * matches is `not_allowed` (and, with domain review, put to the client);
 * `limited` mode lets only GET, HEAD and OPTIONS through.
 */
import { isIP } from "node:net";
import type { RemoteNetworkProxyConfig } from "@execmux/shared";
import { isLoopbackHost, isNonPublicAddress } from "./address-class.js";
import { HostPatternSet, normalizeHost } from "./host-patterns.js";

export type NetworkProtocol = "http" | "https_connect" | "socks5_tcp";
export type Decision = "allow" | "deny" | "ask";
export type DecisionSource = "baseline_policy" | "decider" | "mode_guard";

export interface Verdict {
  readonly decision: Decision;
  /** `allow`, `denied`, `not_allowed`, `not_allowed_local`, `method_not_allowed`, `mitm_required`, or the decider's reason. */
  readonly reason: string;
  readonly source: DecisionSource;
  /** `domain` for decisions about the host, `non_domain` for the mode guard's. */
  readonly scope: "domain" | "non_domain";
  /** Set when the client's review let through a host the policy does not allow. */
  readonly policyOverride?: boolean;
}

export const ALLOWED: Verdict = { decision: "allow", reason: "allow", source: "baseline_policy", scope: "domain" };
const deny = (reason: string): Verdict => ({ decision: "deny", reason, source: "baseline_policy", scope: "domain" });
const modeGuard = (reason: string): Verdict => ({ decision: "deny", reason, source: "mode_guard", scope: "non_domain" });

const LIMITED_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export class NetworkPolicy {
  private constructor(
    private readonly allowed: HostPatternSet,
    private readonly denied: HostPatternSet,
    readonly limited: boolean,
    readonly allowLocalBinding: boolean,
  ) {}

  /** Throws (with upstream's words) on a pattern upstream refuses. */
  static from(config: RemoteNetworkProxyConfig): NetworkPolicy {
    const entries = Object.entries(config.domains ?? {});
    const allow = entries.filter(([, permission]) => permission === "allow").map(([pattern]) => pattern);
    const denyList = entries.filter(([, permission]) => permission === "deny").map(([pattern]) => pattern);
    return new NetworkPolicy(
      new HostPatternSet(allow, { allowGlobalWildcard: true, listName: "network.allowed_domains" }),
      new HostPatternSet(denyList, { allowGlobalWildcard: false, listName: "network.denied_domains" }),
      config.mode === "limited",
      config.allowLocalBinding,
    );
  }

  /**
   * The host's verdict before any name is resolved. `not_allowed` is the
   * only one a decider may overturn (upstream: explicit denials and local
   * addresses are never put to the client).
   */
  judgeHost(rawHost: string): Verdict {
    const host = normalizeHost(rawHost);
    if (host === "" || this.denied.matches(host)) return deny("denied");
    if (this.isLocalLiteral(host) && !this.allowLocalBinding && !this.allowed.namesExactly(host)) return deny("not_allowed_local");
    return this.allowed.matches(host) ? ALLOWED : deny("not_allowed");
  }

  /** What limited mode says once the host is allowed; undefined when it lets the request through. */
  judgeMode(protocol: NetworkProtocol, method: string | undefined): Verdict | undefined {
    if (!this.limited) return undefined;
    if (protocol === "https_connect") return modeGuard("mitm_required");
    if (protocol === "socks5_tcp") return modeGuard("method_not_allowed");
    return LIMITED_METHODS.has((method ?? "").toUpperCase()) ? undefined : modeGuard("method_not_allowed");
  }

  /**
   * Whether a resolved address may be connected to: a name that resolves to
   * a local or private address is refused even when allowlisted (upstream's
   * rule against DNS pointing inside), unless local binding is allowed or
   * the name is one the allow list names exactly as local (`localhost`).
   */
  admitsAddress(rawHost: string, address: string): boolean {
    if (this.allowLocalBinding || !isNonPublicAddress(address)) return true;
    const host = normalizeHost(rawHost);
    return this.isLocalLiteral(host) && this.allowed.namesExactly(host);
  }

  private isLocalLiteral(host: string): boolean {
    return isLoopbackHost(host) || (isIP(host.replace(/%.*$/, "")) !== 0 && isNonPublicAddress(host));
  }
}

/** The body text upstream's proxy gives for each reason. */
export function blockedMessage(verdict: Verdict): string {
  switch (verdict.reason) {
    case "denied":
      return "Domain denied by the sandbox policy.";
    case "not_allowed":
      return "Domain not in allowlist.";
    case "not_allowed_local":
      return "Sandbox policy blocks local/private network addresses.";
    case "method_not_allowed":
      return "Method not allowed in limited mode.";
    case "mitm_required":
      return "Opaque tunnels are not allowed in limited mode.";
    default:
      return "Request blocked by network policy.";
  }
}

/** Upstream's `x-proxy-error` header value for a block. */
export function blockedHeader(verdict: Verdict): string {
  switch (verdict.reason) {
    case "not_allowed":
    case "not_allowed_local":
      return "blocked-by-allowlist";
    case "denied":
      return "blocked-by-denylist";
    case "method_not_allowed":
      return "blocked-by-method-policy";
    case "mitm_required":
      return "blocked-by-mitm-required";
    default:
      return "blocked-by-policy";
  }
}
