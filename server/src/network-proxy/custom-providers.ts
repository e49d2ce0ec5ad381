/**
 * Custom credential providers (`networkProxy.proxy.credentialProviders`,
 * capability credentialMaskingCustomProviders), as upstream 0.171 reads
 * them: a provider names the variables that hold its credential (`env`),
 * what such a credential looks like (`patterns`, regular expressions), where
 * its real value may go (`url_prefixes`, or a URL in the variable
 * `url_prefix_from_env` names) and how requests carry it (`auth`: `bearer`,
 * the default, `token`, `basic`, or `header` with `header` and an optional
 * `prefix`). A value that matches a pattern becomes a random value that
 * matches the same pattern; the proxy puts the real one back only into
 * requests to a destination (credential-broker.ts).
 *
 * Upstream only logs and skips a provider it cannot use, and starts the
 * process with that credential unmasked; here the start is refused (-32602)
 * with upstream's reason, since the client asked for it to be masked.
 *
 * Patterns are matched with re2js (RE2's syntax, close to Rust's regex
 * crate, in linear time); placeholders are drawn with randexp, which reads
 * JavaScript's syntax: a pattern outside what both read cannot make a
 * placeholder and is refused.
 */
import type { RemoteNetworkProxyConfig } from "@execmux/shared";
import randexpModule from "randexp";
import { RE2JS } from "re2js";
import { swapAuthorization } from "./authorization-swap.js";
import { GITHUB_CLOUD_KEYS, GITHUB_ENTERPRISE_KEYS, GITHUB_HOST_KEY, OPENAI_KEYS } from "./builtin-credentials.js";
import { parseDestination, type CredentialDestination } from "./credential-destination.js";
import { DrawBudget, MaskingBudgetExceeded } from "./masking-budget.js";

/** randexp is CommonJS whose module.exports is the class itself; its types describe it as an ES default export. */
const RandExp = randexpModule as unknown as typeof randexpModule.default;
type RandExp = InstanceType<typeof RandExp>;

type ProviderConfig = NonNullable<RemoteNetworkProxyConfig["credentialProviders"]>[string];
export type AuthMethod = "bearer" | "token" | "basic" | "header";

/** Upstream's bounds: a pattern's length, a repetition's draw, the placeholder's length, draws per pattern. */
const MAX_PATTERN_BYTES = 2048;
const MAX_REPEAT = 64;
const MAX_PLACEHOLDER_BYTES = 2048;
const MAX_DRAWS = 64;
/** This exec-server's budget: every pattern of one start is compiled and drawn from once. */
export const MAX_PATTERNS_PER_START = 64;

/** The variables the built-in providers own and the one that binds them. */
const BUILTIN_KEYS = new Set([...GITHUB_CLOUD_KEYS, ...GITHUB_ENTERPRISE_KEYS, ...OPENAI_KEYS, GITHUB_HOST_KEY]);

/** A match at least this long is a credential wherever it is found; a shorter one only after a distinctive prefix. */
const MIN_EMBEDDED_CREDENTIAL_LENGTH = 16;
/** A literal prefix at least this long (`tok_`) makes even a short match a credential. */
const MIN_DISTINCTIVE_PREFIX_LENGTH = 4;
/** What may not follow a discovered credential: a match cut out of a longer word is not one. */
const TOKEN_CHARACTER = /[A-Za-z0-9_-]/;

interface Pattern {
  readonly full: RE2JS;
  /** Leftmost-longest search, for credentials inside other values. */
  readonly longest: RE2JS;
  readonly distinctive: boolean;
  readonly draw: RandExp;
}

/** A compiled provider; the broker calls its methods, so it never loads this module (nor re2js) itself. */
export interface CustomProvider {
  readonly name: string;
  readonly env: readonly string[];
  readonly methods: readonly AuthMethod[];
  /** Lower case, as HTTP compares it. */
  readonly header: string | undefined;
  readonly prefix: string;
  readonly destinations: readonly CredentialDestination[];
  readonly urlPrefixFromEnv: string | undefined;
  readonly patterns: readonly Pattern[];
  recognizes(value: string): boolean;
  /** Where this provider's credentials sit inside `value`, as upstream discovers them in variables it does not list. */
  discover(value: string): [number, number][];
  /** A fresh placeholder for `real`, each attempt charged to `budget`; undefined when none could be drawn. */
  placeholderFor(real: string, budget: DrawBudget): string | undefined;
  destinationsFor(env: Readonly<Record<string, string>>): CredentialDestination[];
  translateHeaders(header: (name: string) => string | undefined, placeholder: string, real: string): [string, string][];
}

const validEnvironmentKey = (key: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key);
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Compiles every provider (in name order) or throws upstream's reason for the first it would skip. */
export function compileProviders(configs: Readonly<Record<string, ProviderConfig>>): CustomProvider[] {
  const names = Object.keys(configs).sort();
  const total = names.reduce((sum, name) => sum + (configs[name]!.patterns?.length ?? 0), 0);
  if (total > MAX_PATTERNS_PER_START) {
    throw new MaskingBudgetExceeded(`custom credential providers name ${total} patterns; this exec-server compiles at most ${MAX_PATTERNS_PER_START} per process start`);
  }
  const owners = new Map<string, string>();
  // Each pattern is tried once at compile time: one budget for all of this start's trial draws.
  const trialDraws = new DrawBudget();
  return names.map((name) => {
    const provider = compileProvider(name, configs[name]!, trialDraws);
    for (const key of provider.env) {
      const owner = owners.get(key);
      // Upstream skips the later of two providers that read one variable; which value would go where is ambiguous.
      if (owner !== undefined) throw new Error(`credential provider \`${name}\` overlaps the environment source of credential provider \`${owner}\``);
      owners.set(key, name);
    }
    return provider;
  });
}

function compileProvider(name: string, config: ProviderConfig, trialDraws: DrawBudget): CustomProvider {
  const env = config.env ?? [];
  const patterns = config.patterns ?? [];
  const urlPrefixes = config.url_prefixes ?? [];
  const fromEnv = config.url_prefix_from_env ?? undefined;
  if (name === "") throw new Error("credential provider name must not be empty");
  if (env.length === 0) throw new Error(`credential provider \`${name}\` has no environment keys`);
  if (patterns.length === 0) throw new Error(`credential provider \`${name}\` has no credential patterns`);
  if (urlPrefixes.length === 0 && fromEnv === undefined) throw new Error(`credential provider \`${name}\` has no destination URL prefixes`);
  if (!env.every(validEnvironmentKey)) throw new Error(`credential provider \`${name}\` has an invalid environment key`);
  if (env.some((key) => BUILTIN_KEYS.has(key))) throw new Error(`credential provider \`${name}\` overlaps a built-in credential source`);
  if (fromEnv !== undefined && (!validEnvironmentKey(fromEnv) || env.includes(fromEnv))) {
    throw new Error(`credential provider \`${name}\` has an invalid host environment key`);
  }
  const destinations = urlPrefixes.map((prefix) => {
    try {
      return parseDestination(prefix);
    } catch (error) {
      throw new Error(`invalid destination for credential provider \`${name}\`: ${(error as Error).message}`);
    }
  });
  const methods = (config.auth?.length ? config.auth : ["bearer"]) as AuthMethod[];
  const header = config.header ?? undefined;
  if (header !== undefined && !HEADER_TOKEN.test(header)) throw new Error(`invalid header for credential provider \`${name}\`: invalid HTTP header name`);
  if (methods.includes("header") !== (header !== undefined)) {
    throw new Error(`credential provider \`${name}\` requires a header name exactly when using header authentication`);
  }
  const prefix = config.prefix ?? undefined;
  if (prefix !== undefined && header === undefined) throw new Error(`credential provider \`${name}\` requires header authentication to use a header prefix`);
  const compiled = patterns.map((pattern) => {
    try {
      return compilePattern(pattern, trialDraws);
    } catch (error) {
      if (error instanceof MaskingBudgetExceeded) throw error;
      throw new Error(`invalid credential pattern for provider \`${name}\`: ${(error as Error).message}`);
    }
  });
  const provider: CustomProvider = {
    name,
    env,
    methods,
    header: header?.toLowerCase(),
    prefix: prefix ?? "",
    destinations,
    urlPrefixFromEnv: fromEnv,
    patterns: compiled,
    recognizes: (value) => recognizes(provider, value),
    discover: (value) => discover(provider, value),
    placeholderFor: (real, budget) => placeholderFor(provider, real, budget),
    destinationsFor: (environment) => destinationsFor(provider, environment),
    translateHeaders: (lookup, placeholder, real) => translateHeaders(provider, lookup, placeholder, real),
  };
  return provider;
}

function compilePattern(source: string, trialDraws: DrawBudget): Pattern {
  if (Buffer.byteLength(source) > MAX_PATTERN_BYTES) throw new Error(`credential pattern exceeds ${MAX_PATTERN_BYTES} bytes`);
  let searching: RE2JS;
  let full: RE2JS;
  let longest: RE2JS;
  try {
    searching = RE2JS.compile(source);
    full = RE2JS.compile(`^(?:${source})$`);
    longest = RE2JS.compile(source, RE2JS.LONGEST_MATCH);
  } catch (error) {
    throw new Error(`regex parse error: ${(error as Error).message}`);
  }
  if (searching.matcher("").find()) throw new Error("credential pattern must not match an empty value");
  let draw: RandExp;
  try {
    draw = new RandExp(source);
  } catch {
    throw new Error("credential pattern could not independently generate a matching dummy");
  }
  draw.max = MAX_REPEAT;
  // RE2's literal prefix (what every match starts with); upstream reads it from the pattern the same way.
  const distinctive = String(longest.re2Input.prefix ?? "").length >= MIN_DISTINCTIVE_PREFIX_LENGTH;
  const pattern = { full, longest, distinctive, draw };
  if (drawPlaceholder(pattern, () => true, trialDraws) === undefined) throw new Error("credential pattern could not independently generate a matching dummy");
  return pattern;
}

function drawPlaceholder(pattern: Pattern, usable: (candidate: string) => boolean, budget: DrawBudget): string | undefined {
  for (let attempt = 0; attempt < MAX_DRAWS; attempt++) {
    const candidate = pattern.draw.gen();
    budget.spend(candidate.length);
    if (Buffer.byteLength(candidate) > MAX_PLACEHOLDER_BYTES || candidate.includes("\0")) continue;
    if (pattern.full.matches(candidate) && usable(candidate)) return candidate;
  }
  return undefined;
}

/** Whether `value` is one of this provider's credentials (a whole match of a pattern). */
function recognizes(provider: CustomProvider, value: string): boolean {
  return provider.patterns.some((pattern) => pattern.full.matches(value));
}

/**
 * Each pattern's matches in `value` (leftmost, then longest), kept when long
 * enough or after a distinctive prefix, and not followed by a letter, digit,
 * `_` or `-`. Linear in `value` per pattern (RE2).
 */
function discover(provider: CustomProvider, value: string): [number, number][] {
  const found: [number, number][] = [];
  for (const pattern of provider.patterns) {
    const matcher = pattern.longest.matcher(value);
    let offset = 0;
    while (offset < value.length && matcher.find(offset)) {
      const [start, end] = [matcher.start(), matcher.end()];
      offset = end > start ? end : start + 1;
      if (end - start < MIN_EMBEDDED_CREDENTIAL_LENGTH && !pattern.distinctive) continue;
      if (end < value.length && TOKEN_CHARACTER.test(value[end]!)) continue;
      found.push([start, end]);
    }
  }
  return found;
}

/** Printable ASCII, what a header value may hold and a client can send back unchanged. */
const HEADER_SAFE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * A fresh value matching the pattern `real` matches, that is not `real` and
 * that each auth method can carry as it would carry `real` (a header value;
 * for Basic, a colon where `real` has one). Undefined: left unmasked.
 */
function placeholderFor(provider: CustomProvider, real: string, budget: DrawBudget): string | undefined {
  const pattern = provider.patterns.find((candidate) => candidate.full.matches(real));
  if (!pattern) return undefined;
  return drawPlaceholder(pattern, (candidate) => {
    if (candidate === real) return false;
    return provider.methods.every((method) =>
      method === "basic" ? candidate.includes(":") === real.includes(":") && HEADER_SAFE.test(candidate) : HEADER_SAFE.test(`${provider.prefix}${candidate}`),
    );
  }, budget);
}

/** The destinations a credential of this provider may go to, given the process's environment (with `url_prefix_from_env`'s URL). */
function destinationsFor(provider: CustomProvider, env: Readonly<Record<string, string>>): CredentialDestination[] {
  const destinations = [...provider.destinations];
  const url = provider.urlPrefixFromEnv ? env[provider.urlPrefixFromEnv] : undefined;
  if (url) {
    try {
      const dynamic = parseDestination(url);
      // A URL from the environment names one host, never a family of them.
      if (!dynamic.wildcard) destinations.push(dynamic);
    } catch {
      // Not a usable URL: only the configured prefixes.
    }
  }
  return destinations;
}

/**
 * The header values a request carrying `placeholder` gets with `real`
 * instead, by the provider's methods: Authorization with the method's
 * scheme (bearer, token: `<scheme> <placeholder>`; basic: the placeholder as
 * user or password), or the provider's header holding exactly
 * `prefix + placeholder`.
 */
function translateHeaders(provider: CustomProvider, header: (name: string) => string | undefined, placeholder: string, real: string): [string, string][] {
  const translated: [string, string][] = [];
  for (const method of provider.methods) {
    if (method === "header") {
      const name = provider.header!;
      if (header(name) === `${provider.prefix}${placeholder}` && !translated.some(([known]) => known === name)) translated.push([name, `${provider.prefix}${real}`]);
      continue;
    }
    const authorization = header("authorization");
    const space = authorization?.indexOf(" ") ?? -1;
    if (authorization === undefined || space < 0 || authorization.slice(0, space).toLowerCase() !== method) continue;
    const value = swapAuthorization(authorization, placeholder, real);
    if (value !== authorization && !translated.some(([known]) => known === "authorization")) translated.push(["authorization", value]);
  }
  return translated;
}
