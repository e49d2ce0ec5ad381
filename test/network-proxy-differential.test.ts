/**
 * process/start's network fields (`networkProxy`, `transparentTcp`) against
 * the real upstream: how each bad value is refused and in which order, what
 * the executor-local proxy puts into the environment, and what a proxied
 * process gets from it (allowed, denied, not listed, local, limited mode,
 * CONNECT, SOCKS5) with the `network/policyDecision` each verdict sends;
 * sandboxed, that the proxy is the only way out. The loopback target is
 * `<http>` (127.0.0.1): it is reachable only because the policy names
 * 127.0.0.1 exactly (a local literal needs that, or allowLocalBinding).
 */
import { networkInterfaces } from "node:os";
import { describeDifferential, type DifferentialCase } from "./helpers/differential.js";
import { CODEX_AUDIT, codexProxy, codexWorkspaceWriteStart, events, start } from "./helpers/exec-server-frames.js";
import { HttpTarget } from "./helpers/http-target.js";

const PROXY = codexProxy({ "127.0.0.1": "allow", localhost: "deny" });
const AUDIT = CODEX_AUDIT;
const launch = (proxy: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  proxy: { ...PROXY, ...proxy },
  auditMetadata: AUDIT,
  environmentId: "remote",
  executionId: "e1",
  ...extra,
});
const MANAGED = { loopbackPorts: [], allowLocalBinding: false };

/** A start that upstream refuses: only its error is compared. */
const refused = (name: string, overrides: Record<string, unknown>, script = "echo never"): DifferentialCase => ({
  name,
  steps: [start("p", script, overrides)],
});

const validation: DifferentialCase[] = [
  refused("managedNetwork.transparentTcp a number", { managedNetwork: { ...MANAGED, transparentTcp: 1 } }),
  refused("managedNetwork.transparentTcp null", { managedNetwork: { ...MANAGED, transparentTcp: null } }),
  refused("managedNetwork.transparentTcp a string", { managedNetwork: { ...MANAGED, transparentTcp: "yes" } }),
  refused("managedNetwork.transparentTcp true without an executor-local proxy", { managedNetwork: { ...MANAGED, transparentTcp: true } }),
  refused("managedNetwork.transparentTcp true beside a proxy without transparentTcp", {
    networkProxy: launch(),
    managedNetwork: { ...MANAGED, transparentTcp: true },
  }),
  refused("networkProxy.proxy.transparentTcp a number", { networkProxy: launch({ transparentTcp: 1 }) }),
  refused("networkProxy.proxy.transparentTcp null", { networkProxy: launch({ transparentTcp: null }) }),
  refused("networkProxy.proxy.transparentTcp true without a sandbox", { networkProxy: launch({ transparentTcp: true }) }),
  refused("networkProxy without proxy", { networkProxy: {} }),
  refused("networkProxy.proxy null", { networkProxy: { proxy: null } }),
  refused("networkProxy.proxy without enableSocks5", { networkProxy: { proxy: { enabled: true } } }),
  refused("networkProxy.proxy without mode", { networkProxy: launch({ mode: undefined }) }),
  refused("networkProxy.proxy without allowLocalBinding", { networkProxy: launch({ allowLocalBinding: undefined }) }),
  refused("networkProxy.proxy.mode unknown", { networkProxy: launch({ mode: "Limited" }) }),
  refused("a domain permission upstream does not know", { networkProxy: launch({ domains: { "a.example": "maybe" } }) }),
  refused("a domains map that is a list", { networkProxy: launch({ domains: ["a.example"] }) }),
  refused("* in the deny list", { networkProxy: launch({ domains: { "*": "deny" } }) }),
  refused("brackets around something that is not IPv6", { networkProxy: launch({ domains: { "[": "allow" } }) }),
  refused("a relative unix socket path", { networkProxy: launch({ unixSockets: { "rel.sock": "allow" } }) }),
  refused("unixSockets a list", { networkProxy: launch({ unixSockets: ["/tmp/x"] }) }),
  refused("a disabled proxy", { networkProxy: launch({ enabled: false }) }),
  refused("policyDecisionTimeoutMs 0", { networkProxy: launch({}, { policyDecisionTimeoutMs: 0 }) }),
  refused("policyDecisionTimeoutMs a string", { networkProxy: launch({}, { policyDecisionTimeoutMs: "5" }) }),
  refused("policyDecisionTimeoutMs negative", { networkProxy: launch({}, { policyDecisionTimeoutMs: -1 }) }),
  refused("auditMetadata a number", { networkProxy: launch({}, { auditMetadata: 5 }) }),
  refused("environmentId a number", { networkProxy: launch({}, { environmentId: 5 }) }),
  // Which check wins when several fail: upstream's order.
  refused("a zero timeout beats a disabled proxy", { networkProxy: launch({ enabled: false }, { policyDecisionTimeoutMs: 0 }) }),
  refused("a zero timeout beats transparentTcp without a sandbox", { networkProxy: launch({ transparentTcp: true }, { policyDecisionTimeoutMs: 0 }) }),
  refused("managedNetwork.transparentTcp beats a disabled proxy", {
    networkProxy: launch({ enabled: false }),
    managedNetwork: { ...MANAGED, transparentTcp: true },
  }),
  refused("transparentTcp without a sandbox beats a disabled proxy", { networkProxy: launch({ enabled: false, transparentTcp: true }) }),
  refused("transparentTcp without a sandbox beats a bad pattern", { networkProxy: launch({ transparentTcp: true, domains: { "*": "deny" } }) }),
  refused("a disabled proxy beats a bad pattern", { networkProxy: launch({ enabled: false, domains: { "*": "deny" } }) }),
  {
    name: "a disabled proxy beats an empty argv",
    steps: [{ request: "process/start", params: { ...start("p", "x").params, argv: [], networkProxy: launch({ enabled: false }) } }],
  },
  {
    name: "transparentTcp false and absent fields are accepted",
    steps: [
      start("p", "echo fine", { managedNetwork: { ...MANAGED, transparentTcp: false }, networkProxy: launch({ transparentTcp: false, domains: undefined, unixSockets: undefined }, { auditMetadata: undefined }) }),
      events("p"),
    ],
  },
];

/** The proxy variables the process sees, ports made comparable (PEER normalization turns 127.0.0.1:N into <peer>). */
const PROXY_ENV = "env | grep -E '^[A-Za-z_]*(PROXY|proxy)=|^CODEX_NET|^NODE_USE_ENV_PROXY|^ELECTRON_GET_USE_PROXY' | sort";
/** What curl got: status, the proxy's error header, and the body. */
const fetch = (args: string) =>
  `: > /tmp/h.$$; : > /tmp/b.$$; curl -s -m 10 -D /tmp/h.$$ -o /tmp/b.$$ -w '%{http_code}' ${args}; echo; grep -i '^x-proxy-error' /tmp/h.$$ | tr -d '\\r'; cat /tmp/b.$$; echo; rm -f /tmp/h.$$ /tmp/b.$$`;
/** Through the HTTP proxy even where NO_PROXY (local binding allowed) would send curl direct. */
const viaHttp = (url: string, extra = "") => fetch(`--noproxy '' -x "$HTTP_PROXY" ${extra} ${url}`);

const decision = (where: Record<string, unknown>) => ({ notification: "network/policyDecision", where });

const unsandboxed: DifferentialCase[] = [
  {
    name: "the proxy environment of an unsandboxed process",
    steps: [start("p", PROXY_ENV, { networkProxy: launch() }), events("p")],
  },
  {
    name: "with local binding allowed and SOCKS5 off",
    steps: [start("p", PROXY_ENV, { networkProxy: launch({ enableSocks5: false, allowLocalBinding: true }) }), events("p")],
  },
  {
    name: "an allowed host, a denied one and one not listed, over HTTP",
    steps: [
      start("p", [viaHttp("<http>/hello"), viaHttp("http://localhost:<http-port>/hello"), viaHttp("http://example.invalid/hello")].join("; "), {
        networkProxy: launch(),
      }),
      events("p"),
      decision({ host: "127.0.0.1", protocol: "http" }),
      decision({ host: "localhost", protocol: "http" }),
      decision({ host: "example.invalid", protocol: "http" }),
    ],
  },
  {
    name: "local and private addresses the policy does not name",
    steps: [
      start("p", [viaHttp("http://127.0.0.2:<http-port>/hello"), viaHttp("http://10.1.2.3/hello"), viaHttp("http://[::1]:<http-port>/hello")].join("; "), {
        networkProxy: launch({ domains: { "127.0.0.1": "allow", "*": "allow" } }),
      }),
      events("p"),
      decision({ host: "127.0.0.2" }),
      decision({ host: "10.1.2.3" }),
      decision({ host: "::1" }),
    ],
  },
  {
    name: "CONNECT tunnels, allowed and denied",
    steps: [
      start("p", [viaHttp("<http>/hello", "-p"), viaHttp("http://localhost:<http-port>/hello", "-p")].join("; "), { networkProxy: launch() }),
      events("p"),
      decision({ host: "127.0.0.1", protocol: "https_connect" }),
      decision({ host: "localhost", protocol: "https_connect" }),
    ],
  },
  {
    name: "SOCKS5, allowed and denied",
    steps: [
      start("p", [fetch('-x "$ALL_PROXY" <http>/hello'), 'curl -s -m 10 -x "$ALL_PROXY" http://localhost:<http-port>/hello; echo "exit $?"'].join("; "), {
        networkProxy: launch(),
      }),
      events("p"),
      decision({ host: "127.0.0.1", protocol: "socks5_tcp" }),
      decision({ host: "localhost", protocol: "socks5_tcp" }),
    ],
  },
  {
    name: "limited mode: GET passes, POST does not, SOCKS5 does not",
    steps: [
      start("p", [viaHttp("<http>/hello"), viaHttp("<http>/echo", "-d x=1"), 'curl -s -m 10 -x "$ALL_PROXY" <http>/hello; echo "exit $?"'].join("; "), {
        networkProxy: launch({ mode: "limited" }),
      }),
      events("p"),
      decision({ method: "GET" }),
      decision({ method: "POST", source: "mode_guard" }),
      decision({ protocol: "socks5_tcp" }),
    ],
  },
];

/**
 * Domain review: with policyDecisionTimeoutMs, a host no entry allows (127.0.0.1 is not listed here;
 * local binding lets local addresses be judged like any other) is put to the client as
 * network/policyRequest, and its answer decides; hosts the policy decides itself are never asked.
 */
const reviewed = (script: string, timeoutMs = 5000) =>
  start("p", script, { networkProxy: launch({ domains: { localhost: "deny" }, allowLocalBinding: true }, { policyDecisionTimeoutMs: timeoutMs }) });

const review: DifferentialCase[] = [
  {
    name: "the client allows a host the policy does not list",
    steps: [reviewed(viaHttp("<http>/hello")), { answer: "network/policyRequest", result: { decision: { type: "allow" } } }, events("p"), decision({ host: "127.0.0.1" })],
  },
  {
    name: "the client denies it, with a reason",
    steps: [
      reviewed(viaHttp("<http>/hello")),
      { answer: "network/policyRequest", result: { decision: { type: "deny", reason: "not today" } } },
      events("p"),
      decision({ host: "127.0.0.1" }),
    ],
  },
  {
    name: "the client asks the user",
    steps: [reviewed(viaHttp("<http>/hello")), { answer: "network/policyRequest", result: { decision: { type: "ask", reason: "ask the user" } } }, events("p"), decision({ host: "127.0.0.1" })],
  },
  {
    name: "the client answers with an error",
    steps: [reviewed(viaHttp("<http>/hello")), { answer: "network/policyRequest", error: { code: -32000, message: "no" } }, events("p"), decision({ host: "127.0.0.1" })],
  },
  {
    name: "the client answers with something that is no decision",
    steps: [reviewed(viaHttp("<http>/hello")), { answer: "network/policyRequest", result: { decision: "yes" } }, events("p"), decision({ host: "127.0.0.1" })],
  },
  {
    name: "the client does not answer in time",
    // Upstream denies about 5 s after the timeout it was given (start.ts, DECISION_GRACE_MS).
    steps: [reviewed(viaHttp("<http>/hello"), 300), { answer: "network/policyRequest" }, events("p"), decision({ host: "127.0.0.1" })],
    timeoutMs: 10_000,
  },
  {
    name: "a denied host and a CONNECT and SOCKS5 to a reviewed one",
    steps: [
      reviewed([viaHttp("http://localhost:<http-port>/hello"), viaHttp("<http>/hello", "-p"), fetch(`--noproxy '' -x "$ALL_PROXY" <http>/hello`)].join("; ")),
      { answer: "network/policyRequest", result: { decision: { type: "allow" } } },
      { answer: "network/policyRequest", result: { decision: { type: "deny", reason: "no socks" } } },
      events("p"),
      decision({ host: "localhost" }),
      decision({ protocol: "https_connect" }),
      decision({ protocol: "socks5_tcp" }),
    ],
  },
];

/** The profile today's Codex sends with network_proxy on: the network "enabled", enforced through the proxy. */
const sandboxed = (script: string, proxy: Record<string, unknown> = {}) => ({
  request: "process/start",
  params: {
    ...codexWorkspaceWriteStart,
    processId: "sandboxed",
    argv: ["/bin/sh", "-c", script],
    envPolicy: null,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", LC_ALL: "C.UTF-8" },
    sandbox: { ...codexWorkspaceWriteStart.sandbox, permissions: { ...codexWorkspaceWriteStart.sandbox.permissions, network: "enabled" } },
    enforceManagedNetwork: true,
    networkProxy: launch(proxy),
  },
});

const confined: DifferentialCase[] = [
  {
    name: "sandboxed: the proxy environment",
    steps: [sandboxed(PROXY_ENV), events("sandboxed")],
  },
  {
    name: "sandboxed: allowed and denied through the proxy, nothing around it",
    steps: [
      sandboxed(
        [
          viaHttp("<http>/hello"),
          viaHttp("http://localhost:<http-port>/hello"),
          // Around the proxy: the namespace has nothing but loopback.
          'curl -s -m 10 --noproxy "*" <http>/hello; echo "direct exit $?"',
        ].join("; "),
      ),
      events("sandboxed"),
      decision({ host: "127.0.0.1" }),
      decision({ host: "localhost" }),
    ],
  },
];

/**
 * Transparent TCP needs a destination off loopback (loopback stays the
 * sandbox's own): the target listens on this machine's first non-internal
 * IPv4 address (192.0.2.2 on the test VMs, a private address, so the profile
 * names it exactly).
 */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry?.family === "IPv4" && !entry.internal)?.address;

class ExternalTarget {
  private readonly inner = new HttpTarget();
  private port = 0;
  get origin(): string {
    return `http://${externalAddress}:${this.port}`;
  }
  async start(): Promise<void> {
    if (!externalAddress) throw new Error("transparent TCP cases need a non-loopback IPv4 address on this machine");
    await this.inner.start(externalAddress);
    this.port = Number(new URL(this.inner.origin).port);
  }
  stop(): Promise<void> {
    return this.inner.stop();
  }
}

/** A transparent-TCP start in the profile today's Codex sends (network enabled, enforced), the target's address allowed. */
const transparentStart = (script: string, domains: Record<string, string> = { [externalAddress ?? "none"]: "allow" }) =>
  sandboxed(script, { transparentTcp: true, domains });

const transparent: DifferentialCase[] = [
  {
    name: "transparent TCP: the proxy environment is the same",
    steps: [transparentStart(PROXY_ENV), events("sandboxed")],
  },
  {
    name: "transparent TCP: a connection that ignores the proxy variables goes through the policy",
    steps: [
      transparentStart(`curl -s -m 10 --noproxy '*' <http>/hello; echo " exit $?"`),
      events("sandboxed"),
      decision({ protocol: "socks5_tcp" }),
    ],
  },
  {
    name: "transparent TCP: a host the policy does not allow is reset",
    steps: [
      // Reset by the relay once its verdict is in: curl words it as failing to connect (7) or as a reset after
      // connecting (56) by when the reset lands, against either server (seen both ways on this machine).
      transparentStart(`curl -sS -m 10 --noproxy '*' <http>/hello >/dev/null 2>&1; code=$?; case $code in 7|56) echo reset;; *) echo "exit $code";; esac`, {
        "other.example": "allow",
      }),
      events("sandboxed"),
      decision({ protocol: "socks5_tcp" }),
    ],
  },
  {
    name: "transparent TCP: a name is judged by its name",
    steps: [
      transparentStart(`curl -sS -m 10 --noproxy '*' http://denied.example/ 2>&1; echo " exit $?"`, { "denied.example": "deny" }),
      events("sandboxed"),
      decision({ host: "denied.example" }),
    ],
  },
  {
    name: "transparent TCP: loopback stays the sandbox's own",
    steps: [transparentStart(`curl -sS -m 10 --noproxy '*' http://127.0.0.1:<http-port>/ 2>&1; echo " exit $?"`), events("sandboxed")],
  },
];

/** What 0.171.0 added (transparent TCP): 0.169 ignores the fields and starts the process, so these cases need 0.171. */
const since171 = (cases: DifferentialCase[], applies: (testCase: DifferentialCase) => boolean = () => true) =>
  cases.map((testCase) => (applies(testCase) ? { ...testCase, since: "0.171.0" } : testCase));
const refusesTransparentTcp = (testCase: DifferentialCase) =>
  /transparentTcp (a |null|true)|transparentTcp beats|transparentTcp without a sandbox beats/.test(testCase.name);

describeDifferential("process/start networkProxy: validation", since171(validation, refusesTransparentTcp));
describeDifferential("process/start networkProxy: unsandboxed", unsandboxed, { httpTarget: new HttpTarget() });
describeDifferential("process/start networkProxy: sandboxed", confined, { httpTarget: new HttpTarget() });
describeDifferential("process/start networkProxy: domain review", review, { httpTarget: new HttpTarget() });
describeDifferential("process/start networkProxy: transparent TCP", since171(transparent), { httpTarget: new ExternalTarget() });
