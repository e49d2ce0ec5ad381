/**
 * Every connection a proxied process asks for passes here once: the policy's
 * verdict on the host, the client's (domain review) when the policy leaves
 * it open, the mode guard, then the name resolved and each address checked,
 * so what is connected to is exactly what was judged (no second lookup a
 * changed DNS answer could slip through). Each verdict is reported to the
 * client as upstream reports it (`network/policyDecision`).
 *
 * Whatever the policy says, the daemon's own listening ports on this
 * machine are never reachable through the proxy: a sandboxed process must
 * not become a client of the daemon that confines it (issue #34).
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { isLoopbackHost } from "./address-class.js";
import { normalizeHost } from "./host-patterns.js";
import { ALLOWED, type NetworkPolicy, type NetworkProtocol, type Verdict } from "./policy.js";

export interface ConnectRequest {
  readonly protocol: NetworkProtocol;
  readonly host: string;
  readonly port: number;
  /** The HTTP method (absent for SOCKS5). */
  readonly method?: string;
  /** The process's side of the connection, as `address:port`. */
  readonly client: string;
}

/** What a decider (the client, through network/policyRequest) answers for a host the policy leaves open. */
export type Decider = (request: ConnectRequest) => Promise<{ decision: "allow" | "deny" | "ask"; reason?: string }>;

export interface DecisionRecord {
  readonly scope: Verdict["scope"];
  readonly decision: Verdict["decision"];
  readonly source: Verdict["source"];
  readonly reason: string;
  readonly protocol: NetworkProtocol;
  readonly host: string;
  readonly port: number;
  readonly method?: string;
  readonly client: string;
  /** The client's decision let through what the policy would not. */
  readonly policyOverride: boolean;
}

export interface GateOptions {
  readonly policy: NetworkPolicy;
  readonly decider?: Decider | undefined;
  /** Told of every verdict (network/policyDecision). */
  readonly report: (record: DecisionRecord) => void;
  /** Ports the daemon listens on (asked when a connection heads for this machine): refused on every address of it. */
  readonly protectedPorts: () => ReadonlySet<number>;
}

export type GateResult = { readonly verdict: Verdict; readonly address?: undefined } | { readonly verdict: typeof ALLOWED; readonly address: string; readonly family: 4 | 6 };

/** At most this many name lookups at once, daemon-wide: they run on libuv's small thread pool, which fs calls share. */
const MAX_LOOKUPS = 2;
let lookups = 0;
const waitingLookups: (() => void)[] = [];

async function resolveAll(host: string): Promise<{ address: string; family: number }[]> {
  if (lookups >= MAX_LOOKUPS) await new Promise<void>((resolve) => waitingLookups.push(resolve));
  lookups++;
  try {
    return await lookup(host, { all: true, verbatim: true });
  } finally {
    lookups--;
    waitingLookups.shift()?.();
  }
}

function thisMachinesAddresses(): Set<string> {
  const addresses = new Set(["0.0.0.0", "::"]);
  for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) addresses.add(entry.address);
  return addresses;
}

export class Gate {
  constructor(private readonly options: GateOptions) {}

  async judge(request: ConnectRequest): Promise<GateResult> {
    const host = normalizeHost(request.host);
    if (request.protocol === "socks5_tcp") {
      // Upstream's mode guard turns SOCKS5 away before it looks at the host.
      const mode = this.options.policy.judgeMode(request.protocol, undefined);
      if (mode) return this.report(request, host, mode);
    }
    let verdict = this.options.policy.judgeHost(host);
    if (verdict.reason === "not_allowed" && this.options.decider) verdict = await this.ask(request, host);
    let target: { address: string; family: 4 | 6 } | undefined;
    if (verdict.decision === "allow") {
      target = await this.pick(host, request.port);
      if (!target) verdict = { decision: "deny", reason: "not_allowed_local", source: "baseline_policy", scope: "domain" };
    }
    this.report(request, host, verdict);
    if (verdict.decision !== "allow" || !target) return { verdict };
    const mode = request.protocol === "socks5_tcp" ? undefined : this.options.policy.judgeMode(request.protocol, request.method);
    if (mode) return this.report(request, host, mode);
    return { verdict: ALLOWED, ...target };
  }

  private async ask(request: ConnectRequest, host: string): Promise<Verdict> {
    try {
      const answer = await this.options.decider!({ ...request, host });
      // Upstream keeps the policy's reason and marks the decision an override.
      if (answer.decision === "allow") return { decision: "allow", reason: "not_allowed", source: "decider", scope: "domain", policyOverride: true };
      return { decision: answer.decision, reason: answer.reason ?? "not_allowed", source: "decider", scope: "domain" };
    } catch {
      // No usable answer (timeout, an error, the client gone): denied, as upstream's decider denies then.
      return { decision: "deny", reason: "not_allowed", source: "decider", scope: "domain" };
    }
  }

  /** The address to connect to: the first the policy admits, unless any it resolves to is refused. */
  private async pick(host: string, port: number): Promise<{ address: string; family: 4 | 6 } | undefined> {
    const literal = host.replace(/%.*$/, "");
    let candidates: { address: string; family: number }[];
    if (isIP(literal)) candidates = [{ address: literal, family: isIP(literal) }];
    else if (isLoopbackHost(host)) candidates = [{ address: "127.0.0.1", family: 4 }];
    else {
      try {
        candidates = await resolveAll(host);
      } catch {
        return undefined;
      }
    }
    if (candidates.length === 0 || !candidates.every(({ address }) => this.options.policy.admitsAddress(host, address))) return undefined;
    const local = thisMachinesAddresses();
    if (candidates.some(({ address }) => local.has(address) || isLoopbackHost(address)) && this.options.protectedPorts().has(port)) return undefined;
    const first = candidates[0]!;
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  }

  private report(request: ConnectRequest, host: string, verdict: Verdict): { verdict: Verdict } {
    this.options.report({
      scope: verdict.scope,
      decision: verdict.decision,
      source: verdict.source,
      reason: verdict.reason,
      protocol: request.protocol,
      host,
      port: request.port,
      ...(request.method === undefined ? {} : { method: request.method }),
      client: request.client,
      policyOverride: verdict.policyOverride === true,
    });
    return { verdict };
  }
}
