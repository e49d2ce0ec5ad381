/**
 * Credential masking (networkProxy.proxy.credentialMasking), as the upstream
 * 0.171 exec-server does it (measured against the binary, docs/network-proxy.md):
 * a GitHub or OpenAI credential the process would inherit from the
 * executor's own environment is replaced by a placeholder of the same shape
 * (`ghp_masked…`), and the proxy puts the real value back only into the
 * Authorization header of HTTPS requests to that credential's hosts, which it
 * terminates with its own CA (mitm-front.ts). The real value stays in this
 * daemon's memory; a placeholder sent anywhere else goes as it is.
 *
 * Upstream masks only for `bash -c` (a login shell, `sh -c` or a program run
 * directly keep the real values), and only values inherited from the
 * executor (what the client sends in `env` it knows already). Custom
 * providers (custom-providers.ts) add credentials of their own shapes,
 * bound to URL prefixes rather than hosts, wherever their values come from.
 */
import { randomInt } from "node:crypto";
import { basename } from "node:path";
import { swapAuthorization } from "./authorization-swap.js";
import { matchesHost, matchesRequest, type CredentialDestination, type RequestTarget } from "./credential-destination.js";
import type { CustomProvider } from "./custom-providers.js";
import { GITHUB_CLOUD_KEYS, GITHUB_ENTERPRISE_KEYS, GITHUB_HOST_KEY, OPENAI_KEYS } from "./builtin-credentials.js";
import { normalizeHost } from "./host-patterns.js";
import { DrawBudget, MaskingBudgetExceeded } from "./masking-budget.js";
import { isOperationalPathMatch } from "./operational-path.js";

export const BROKER_ACTIVE_ENV = "CODEX_NETWORK_PROXY_CREDENTIAL_BROKER_ACTIVE";
export const BROKERED_CREDENTIALS_ENV = "CODEX_NETWORK_PROXY_BROKERED_CREDENTIALS";

const GITHUB_PREFIXES = ["github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"];
const OPENAI_PREFIXES = ["sk-svcacct-", "sk-admin-", "sk-proj-", "sk-"];
/** A credential longer than this is not one (and would make the header scan costly). */
const MAX_CREDENTIAL_BYTES = 4096;
/**
 * Characters one start's discovery may search, each value once per custom
 * pattern: about 50 ms of RE2 on the benchmark VM when used up (re2js
 * searched 22 M characters a second there); a 16 KiB environment against
 * 64 patterns fits.
 */
const DISCOVERY_SEARCH_BUDGET = 1 << 20;
/** Characters one start's masking may search for the credentials' copies (a native substring search each): tens of milliseconds. */
const REPLACEMENT_SEARCH_BUDGET = 64 << 20;
/** Credentials one start may broker: each costs a placeholder drawn, a marker entry and a pass over every variable. */
const MAX_BROKERED_CREDENTIALS = 256;

/** Credential-shaped values one start's discovery may examine (each costs a look at its surroundings and the other providers). */
const MAX_DISCOVERY_CANDIDATES = 1024;

/** One start brokers at most MAX_BROKERED_CREDENTIALS: past it the start is refused, never run with the rest unmasked. */
function roomForOneMore(credentials: readonly BrokeredCredential[]): void {
  if (credentials.length >= MAX_BROKERED_CREDENTIALS) {
    throw new MaskingBudgetExceeded(`the environment holds more than ${MAX_BROKERED_CREDENTIALS} credentials to mask; at most ${MAX_BROKERED_CREDENTIALS} per process start`);
  }
}

const unmaskable = (name: string) =>
  `no placeholder could be drawn for the credential in ${name} (its pattern left no other value a header can carry): the process was not started with it unmasked`;

interface Source {
  /** Sources of one kind share prefixes and a minimum length; the last bound one takes the credentials found elsewhere. */
  readonly kind: "github" | "openai";
  readonly env: readonly string[];
  readonly prefixes: readonly string[];
  /** The hosts the real value may go to, from the environment; none: not brokered. */
  readonly hosts: (env: Readonly<Record<string, string>>) => ((host: string) => boolean) | undefined;
}

const githubCloud = (host: string) => host === "github.com" || host === "api.github.com" || host === "uploads.github.com" || host.endsWith(".ghe.com");

const SOURCES: readonly Source[] = [
  { kind: "github", env: GITHUB_CLOUD_KEYS, prefixes: GITHUB_PREFIXES, hosts: () => githubCloud },
  {
    kind: "github",
    env: GITHUB_ENTERPRISE_KEYS,
    prefixes: GITHUB_PREFIXES,
    // GitHub Enterprise: the one host GH_HOST names (unless it is GitHub's own).
    hosts: (env) => {
      const named = env[GITHUB_HOST_KEY] ? normalizeHost(env[GITHUB_HOST_KEY]) : "";
      return named && !githubCloud(named) ? (host) => host === named : undefined;
    },
  },
  { kind: "openai", env: OPENAI_KEYS, prefixes: OPENAI_PREFIXES, hosts: () => (host) => host === "api.openai.com" },
];

/**
 * How upstream tells a built-in credential inside another variable: at
 * least this long (a run of letters, digits, `_` and `-` from its prefix),
 * and for OpenAI not another vendor's `sk-` key unless it carries OpenAI's mark.
 */
const DISCOVERY = {
  github: { minimum: 40, ignored: [] as string[], watermark: undefined as string | undefined },
  openai: { minimum: 51, ignored: ["sk-ant-", "sk-or-"], watermark: "T3BlbkFJ" },
};
/** Variables never searched for credentials: search paths, and the ones that say where a credential may go. */
const CONTEXT_KEYS = [GITHUB_HOST_KEY, "OPENAI_BASE_URL"];
const TOKEN_RUN = /[A-Za-z0-9_-]*/y;

export interface BrokeredCredential {
  readonly name: string;
  readonly real: string;
  readonly placeholder: string;
  /** A built-in provider's: bound to hosts, carried in Authorization over HTTPS. */
  readonly matchesHost?: (host: string) => boolean;
  /** A custom provider's: bound to URL prefixes, carried as the provider says. */
  readonly custom?: { readonly provider: CustomProvider; readonly destinations: readonly CredentialDestination[] };
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `prefix` + `masked` + random letters and digits, as long as the real value, keeping its punctuation where it has any. */
export function placeholderFor(real: string, prefix: string): string {
  let text = `${prefix}masked`;
  for (let index = text.length; index < Math.max(real.length, prefix.length + 16); index++) {
    const template = real[index];
    text += template !== undefined && !/[A-Za-z0-9]/.test(template) ? template : ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  }
  return text;
}

/** The built-in tokens of one kind inside `value`: each prefix's run of token characters, long enough and not another vendor's. */
function builtinCandidates(kind: Source["kind"], prefixes: readonly string[], value: string): { start: number; real: string; prefix: string }[] {
  const { minimum, ignored, watermark } = DISCOVERY[kind];
  const found = new Map<number, { start: number; real: string; prefix: string }>();
  for (const prefix of prefixes) {
    // A later start inside the same run ends where it does: each run is scanned once per prefix.
    let runEnd = -1;
    for (let start = value.indexOf(prefix); start >= 0; start = value.indexOf(prefix, start + 1)) {
      if (start >= runEnd) {
        TOKEN_RUN.lastIndex = start;
        runEnd = start + TOKEN_RUN.exec(value)![0].length;
      }
      // Token characters are ASCII: a run's length is its size in bytes.
      if (found.has(start) || runEnd - start < minimum || runEnd - start > MAX_CREDENTIAL_BYTES) continue;
      const real = value.slice(start, runEnd);
      if (ignored.some((other) => real.startsWith(other)) && (watermark === undefined || !real.includes(watermark))) continue;
      found.set(start, { start, real, prefix: prefixes.find((candidate) => real.startsWith(candidate))! });
    }
  }
  return [...found.values()];
}

/** Whether upstream would mask for this argv: bash, not a login shell, running a command string. */
export function masksFor(argv: readonly string[]): boolean {
  return argv.length >= 3 && basename(argv[0]!) === "bash" && argv[1] === "-c";
}

export class CredentialBroker {
  readonly credentials: BrokeredCredential[] = [];

  /**
   * Replaces, in `env`, each credential with a placeholder, and every other
   * variable's copy of it too; sets upstream's two marker variables. A
   * credential is masked wherever it came from, the executor's environment
   * or the client's `env`, as upstream 0.171 masks it (asked of the binary:
   * a GH_TOKEN or GH_ENTERPRISE_TOKEN the client sends, with or without an
   * executor's own, with or without an envPolicy, comes out masked).
   */
  static virtualize(env: Record<string, string>, providers: readonly CustomProvider[] = []): CredentialBroker {
    const broker = new CredentialBroker();
    const draws = new DrawBudget();
    const marker: [string, string][] = [];
    for (const source of SOURCES) {
      const matchesHost = source.hosts(env);
      if (!matchesHost) continue;
      for (const name of source.env) {
        const real = env[name]?.trim();
        if (!real || Buffer.byteLength(real) > MAX_CREDENTIAL_BYTES) continue;
        const prefix = source.prefixes.find((candidate) => real.startsWith(candidate));
        if (!prefix) continue;
        const placeholder = broker.credentials.find((known) => known.real === real)?.placeholder ?? placeholderFor(real, prefix);
        broker.credentials.push({ name, real, placeholder, matchesHost });
        marker.push([name, placeholder]);
      }
    }
    for (const provider of providers) {
      const destinations = provider.destinationsFor(env);
      if (destinations.length === 0) continue;
      for (const name of provider.env) {
        const real = env[name]?.trim();
        if (!real || Buffer.byteLength(real) > MAX_CREDENTIAL_BYTES || !provider.recognizes(real)) continue;
        roomForOneMore(broker.credentials);
        const placeholder = provider.placeholderFor(real, draws);
        // A credential recognised but not maskable is never handed over as it is.
        if (placeholder === undefined) throw new MaskingBudgetExceeded(unmaskable(name));
        broker.credentials.push({ name, real, placeholder, custom: { provider, destinations } });
        marker.push([name, placeholder]);
      }
    }
    broker.discover(env, providers, marker, draws);
    const replaced = broker.credentials.length * Object.values(env).reduce((sum, value) => sum + value.length, 0);
    if (replaced > REPLACEMENT_SEARCH_BUDGET) {
      throw new MaskingBudgetExceeded(
        `masking would search ${replaced} characters (the environment's values once per credential); at most ${REPLACEMENT_SEARCH_BUDGET} per process start`,
      );
    }
    // Every variable that carries a brokered value (the credential's own included) gets the placeholder instead.
    for (const [name, value] of Object.entries(env)) {
      let masked = value;
      for (const credential of broker.credentials) {
        if (!masked.includes(credential.real)) continue;
        masked = masked.split(credential.real).join(credential.placeholder);
        marker.push([`@alias:${name}`, credential.placeholder]);
      }
      if (masked !== value) env[name] = masked;
    }
    const unique = [...new Map(marker.map((entry) => [entry.join("\0"), entry])).values()];
    unique.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
    env[BROKER_ACTIVE_ENV] = "1";
    env[BROKERED_CREDENTIALS_ENV] = JSON.stringify(unique);
    return broker;
  }

  /**
   * Credentials in variables no provider lists, as upstream 0.171 finds
   * them: a built-in token (GitHub, OpenAI) or a custom provider's pattern
   * match anywhere in a value, unless it is part of a path or a URL's host
   * (operational-path.ts). Each is registered under its provider's first
   * variable, bound where that provider's credentials go, and masked like
   * any other. Each value is searched once per prefix and pattern.
   */
  private discover(env: Readonly<Record<string, string>>, providers: readonly CustomProvider[], marker: [string, string][], draws: DrawBudget): void {
    const contextKeys = new Set([...CONTEXT_KEYS, ...providers.flatMap((provider) => (provider.urlPrefixFromEnv ? [provider.urlPrefixFromEnv] : []))]);
    const values = Object.entries(env)
      .filter(([name]) => name.toUpperCase() !== "PATH" && !name.toUpperCase().endsWith("_PATH") && !contextKeys.has(name))
      .map(([, value]) => value);
    const bound = providers.filter((provider) => provider.destinationsFor(env).length > 0);
    const patterns = (of: readonly CustomProvider[]) => of.reduce((sum, provider) => sum + provider.patterns.length, 0);
    let searched = 0;
    const search = (characters: number) => {
      searched += characters;
      if (searched > DISCOVERY_SEARCH_BUDGET) {
        throw new MaskingBudgetExceeded(
          `finding credentials would search more than ${DISCOVERY_SEARCH_BUDGET} characters (the environment's values once per custom credential pattern); at most that per process start`,
        );
      }
    };
    let examined = 0;
    const examine = () => {
      if (++examined > MAX_DISCOVERY_CANDIDATES) {
        throw new MaskingBudgetExceeded(`the environment holds more than ${MAX_DISCOVERY_CANDIDATES} credential-shaped values; at most that many are examined per process start`);
      }
    };
    search(values.reduce((sum, value) => sum + value.length, 0) * patterns(bound));
    const known = new Set(this.credentials.map((credential) => credential.real));
    const register = (credential: Omit<BrokeredCredential, "placeholder">, placeholder: () => string | undefined) => {
      roomForOneMore(this.credentials);
      const drawn = placeholder();
      if (drawn === undefined) throw new MaskingBudgetExceeded(unmaskable(credential.name));
      known.add(credential.real);
      this.credentials.push({ ...credential, placeholder: drawn });
      marker.push([credential.name, drawn]);
    };
    const customFound = new Map<string, { provider: CustomProvider; start: number; end: number }[]>();
    for (const value of values) {
      customFound.set(value, bound.flatMap((provider) => provider.discover(value).map(([start, end]) => ({ provider, start, end }))));
    }
    const builtinSpans = new Map<string, [number, number][]>();
    for (const kind of ["github", "openai"] as const) {
      // The last source of this kind that is bound here takes what is found.
      const taker = SOURCES.flatMap((candidate) => {
        const matchesHost = candidate.kind === kind ? candidate.hosts(env) : undefined;
        return matchesHost ? [{ source: candidate, matchesHost }] : [];
      }).at(-1);
      if (!taker) continue;
      const { source, matchesHost } = taker;
      for (const value of values) {
        for (const { start, real, prefix } of builtinCandidates(kind, source.prefixes, value)) {
          examine();
          const end = start + real.length;
          if (isOperationalPathMatch(value, start, end)) continue;
          let spans = builtinSpans.get(value);
          if (!spans) builtinSpans.set(value, (spans = []));
          spans.push([start, end]);
          if (known.has(real)) continue;
          // The whole value of a variable its kind lists is that variable's, bound where it binds it.
          if (SOURCES.some((listed) => listed.kind === kind && listed.env.some((name) => env[name]?.trim() === real))) continue;
          // A custom provider's credential that starts here and reaches at least as far is the custom provider's.
          if (customFound.get(value)!.some((found) => found.start === start && found.end >= end)) continue;
          register({ name: source.env[0]!, real, matchesHost }, () => placeholderFor(real, prefix));
        }
      }
    }
    for (const [value, found] of customFound) {
      for (const { provider, start, end } of found) {
        examine();
        if (end - start > MAX_CREDENTIAL_BYTES) continue;
        const real = value.slice(start, end);
        if (known.has(real) || Buffer.byteLength(real) > MAX_CREDENTIAL_BYTES || isOperationalPathMatch(value, start, end)) continue;
        const overlaps = (from: number, to: number) => from < end && start < to;
        if ((builtinSpans.get(value) ?? []).some(([from, to]) => overlaps(from, to))) continue;
        if (found.some((other) => other.provider !== provider && overlaps(other.start, other.end))) continue;
        // A value another provider recognises a credential in is ambiguous: whose destinations would get it?
        const others = providers.filter((other) => other !== provider);
        search(real.length * patterns(others));
        if (others.some((other) => other.discover(real).length > 0)) continue;
        if (SOURCES.some((candidate) => builtinCandidates(candidate.kind, candidate.prefixes, real).length > 0)) continue;
        register({ name: provider.env[0]!, real, custom: { provider, destinations: provider.destinationsFor(env) } }, () => provider.placeholderFor(real, draws));
      }
    }
  }

  /** Whether CONNECTs to this host and port are terminated here (a credential may go there over HTTPS). */
  requiresMitm(host: string, port: number): boolean {
    const normalized = normalizeHost(host);
    return this.credentials.some((credential) =>
      credential.custom
        ? credential.custom.destinations.some((destination) => destination.scheme === "https" && matchesHost(destination, normalized, port))
        : credential.matchesHost!(normalized),
    );
  }

  /** Whether plain HTTP requests to this host and port may get a real value (a custom provider's loopback `http://` prefix). */
  interceptsHttp(host: string, port: number): boolean {
    const normalized = normalizeHost(host);
    return this.credentials.some((credential) =>
      credential.custom?.destinations.some((destination) => destination.scheme === "http" && matchesHost(destination, normalized, port)),
    );
  }

  /**
   * The headers of a request to `target` that get a real value in place of
   * its placeholder (lower-case name to new value). Built-in credentials go
   * in Authorization over HTTPS to their hosts; a custom provider's to its
   * destinations, as its auth methods say. Two credentials that would give
   * one header different values give it neither (upstream's ambiguity rule).
   */
  headersFor(target: RequestTarget, header: (name: string) => string | undefined): Map<string, string> {
    const changed = new Map<string, string>();
    const authorization = header("authorization");
    if (target.scheme === "https" && authorization !== undefined) {
      const value = this.authorizationFor(target.host, authorization);
      if (value !== authorization) changed.set("authorization", value);
    }
    const proposals = new Map<string, Set<string>>();
    for (const credential of this.credentials) {
      const custom = credential.custom;
      if (!custom || !custom.destinations.some((destination) => matchesRequest(destination, target))) continue;
      for (const [name, value] of custom.provider.translateHeaders(header, credential.placeholder, credential.real)) {
        proposals.set(name, (proposals.get(name) ?? new Set()).add(value));
      }
    }
    for (const [name, values] of proposals) {
      if (values.size === 1 && !changed.has(name)) changed.set(name, [...values][0]!);
      else changed.delete(name);
    }
    return changed;
  }

  /**
   * The Authorization header with the real value for the placeholder of a
   * built-in credential bound to `host`: a bearer-style `<scheme> <placeholder>`,
   * or Basic with the placeholder as user or password. Anything else (the
   * placeholder inside a longer word, another header) is left as it is.
   */
  private authorizationFor(host: string, value: string): string {
    const normalized = normalizeHost(host);
    let result = value;
    for (const credential of this.credentials) {
      if (credential.matchesHost?.(normalized)) result = swapAuthorization(result, credential.placeholder, credential.real);
    }
    return result;
  }
}
