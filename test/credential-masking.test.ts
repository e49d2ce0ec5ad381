/**
 * Credential masking (`networkProxy.proxy.credentialMasking`) against the
 * real upstream 0.171 and execmux alike. Each server runs with a GitHub
 * Enterprise token in its own environment and GH_HOST=127.0.0.1 (how the
 * binary can be pointed at a loopback host: the enterprise token is bound to
 * the host GH_HOST names), and SSL_CERT_FILE naming the test CA, so that its
 * proxy trusts the loopback HTTPS server this test starts. A `bash -c`
 * process inherits the token: it must see only a placeholder, the marker
 * variables and a CA bundle; the server must see the real token only on the
 * HTTPS request to the credentialed host, the placeholder elsewhere.
 */
import { readFileSync, realpathSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codexSandbox, ErrorCode } from "@execmux/shared";
import { spawnDaemon } from "./helpers/cli.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { TEST_LEAF_CERT, TEST_LEAF_KEY } from "./helpers/tls-fixture.js";
import { olderThan } from "./helpers/differential.js";
import { upstreamVersion } from "./helpers/upstream.js";
import { executorEnv, maskingServers, REAL_TOKEN } from "./helpers/credential-masking-servers.js";
import { CODEX_AUDIT, codexProxy, startParams as codexStartParams } from "./helpers/exec-server-frames.js";
import { WireClient } from "./helpers/wire-client.js";

const REAL = REAL_TOKEN;
const PROXY = codexProxy({ "127.0.0.1": "allow", localhost: "allow" });
const INHERIT_ALL = { inherit: "all", ignoreDefaultExcludes: true, exclude: [], set: {}, includeOnly: [] };

const startParams = (processId: string, argv: string[], proxy: Record<string, unknown> = {}) =>
  codexStartParams(processId, "", {
    argv,
    cwd: "file:///tmp",
    envPolicy: INHERIT_ALL,
    env: { PATH: "/usr/bin:/bin" },
    networkProxy: { proxy: { ...PROXY, credentialMasking: true, ...proxy }, auditMetadata: CODEX_AUDIT, environmentId: "remote", executionId: "e1" },
  });

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A loopback HTTPS and a plain HTTP server that record what Authorization each request carried. */
async function targets(): Promise<{ https: number; http: number; seen: string[]; apiKeys: string[] }> {
  const seen: string[] = [];
  const apiKeys: string[] = [];
  const record = (scheme: string) => (request: IncomingMessage, response: ServerResponse) => {
    seen.push(`${scheme} ${request.url} ${request.headers.authorization ?? "-"}`);
    apiKeys.push(String(request.headers["x-api-key"] ?? "-"));
    response.end("ok\n");
  };
  const https = createHttpsServer({ key: TEST_LEAF_KEY, cert: TEST_LEAF_CERT }, record("https"));
  const http = createHttpServer(record("http"));
  for (const server of [https, http]) {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => server.close());
  }
  return { https: (https.address() as AddressInfo).port, http: (http.address() as AddressInfo).port, seen, apiKeys };
}

const servers = maskingServers;

async function run(client: WireClient, processId: string, argv: string[]): Promise<string> {
  const closed = client.closedOf(processId);
  const started = await client.request("process/start", startParams(processId, argv));
  expect(started.error).toBeUndefined();
  await closed;
  return client.output(processId);
}

const CA_KEYS = [
  "BUNDLE_SSL_CA_CERT", "CARGO_HTTP_CAINFO", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "CODEX_CA_CERTIFICATE", "CURL_CA_BUNDLE", "DENO_CERT",
  "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "NPM_CONFIG_CAFILE", "PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "npm_config_cafile",
];

describe.each(Object.keys(servers) as (keyof typeof servers)[])("credential masking on %s", (server) => {
  it("gives a bash -c process a placeholder, and the real token goes only to the credentialed host", async () => {
    const { https, http, seen } = await targets();
    const client = await WireClient.ready(await servers[server](executorEnv()));
    const info = await client.call<{ capabilities: Record<string, boolean> }>("environment/info", null);
    expect(info.capabilities.credentialMasking).toBe(true);

    const script = [
      `for url in https://127.0.0.1:${https}/credentialed https://localhost:${https}/other http://127.0.0.1:${http}/plain; do`,
      `  curl -sS -m 10 -o /dev/null -w "%{http_code}\\n" -H "Authorization: Bearer $GH_ENTERPRISE_TOKEN" $url; done`,
      `curl -sS -m 10 -o /dev/null -w "%{http_code}\\n" -u "x:$GH_ENTERPRISE_TOKEN" https://127.0.0.1:${https}/basic`,
      `echo "token=$GH_ENTERPRISE_TOKEN"`,
      `echo "active=$CODEX_NETWORK_PROXY_CREDENTIAL_BROKER_ACTIVE"`,
      `echo "brokered=$CODEX_NETWORK_PROXY_BROKERED_CREDENTIALS"`,
      `for key in ${CA_KEYS.join(" ")}; do [ "\${!key}" = "$SSL_CERT_FILE" ] && [ -s "$SSL_CERT_FILE" ] && echo "ca $key"; done`,
      `grep -c "BEGIN CERTIFICATE" "$SSL_CERT_FILE" >/dev/null && echo bundle readable`,
      `grep -l "PRIVATE KEY" "$SSL_CERT_FILE" "$(dirname "$SSL_CERT_FILE")"/* 2>/dev/null; echo "keys found: $?"`,
    ].join("\n");
    const output = await run(client, "masked", ["/bin/bash", "-c", script]);

    const placeholder = /^token=(\S+)$/m.exec(output)?.[1] ?? "";
    expect(placeholder).toMatch(/^ghp_masked[A-Za-z0-9]{30}$/);
    expect(output).not.toContain(REAL);
    const basicOf = (token: string) => `Basic ${Buffer.from(`x:${token}`).toString("base64")}`;
    expect(output.replaceAll(placeholder, "<placeholder>")).toBe(
      [
        "200", "200", "200", "200",
        "token=<placeholder>",
        "active=1",
        `brokered=[["@alias:GH_ENTERPRISE_TOKEN","<placeholder>"],["GH_ENTERPRISE_TOKEN","<placeholder>"]]`,
        // Each names the bundle, but a CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE the executor has (this test's may) is kept.
        ...CA_KEYS.filter((key) => key !== "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE" || !process.env[key])
          // DENO_CERT came with 0.171.0 (execmux names it, as 0.171 does).
          .filter((key) => key !== "DENO_CERT" || server === "execmux" || !olderThan(upstreamVersion, "0.171.0"))
          .map((key) => `ca ${key}`),
        "bundle readable",
        "keys found: 1",
        "",
      ].join("\n"),
    );
    // The real value went to the credentialed host only; the placeholder went as it was everywhere else.
    expect(seen).toEqual([
      `https /credentialed Bearer ${REAL}`,
      `https /other Bearer ${placeholder}`,
      `http /plain Bearer ${placeholder}`,
      `https /basic ${basicOf(REAL)}`,
    ]);
  });

  it("leaves a login shell's and sh's environment as it was, as upstream does", async () => {
    const client = await WireClient.ready(await servers[server](executorEnv()));
    for (const [processId, argv] of [["login", ["/bin/bash", "-lc", "echo token=$GH_ENTERPRISE_TOKEN"]], ["sh", ["/bin/sh", "-c", "echo token=$GH_ENTERPRISE_TOKEN"]]] as const) {
      expect(await run(client, processId, [...argv])).toBe(`token=${REAL}\n`);
    }
  });

  it("masks a token the client sends in env too, beside the executor's own or alone", async () => {
    const { https, seen } = await targets();
    const client = await WireClient.ready(await servers[server](executorEnv()));
    const sent = "ghp_zyxwvutsrqponmlkjihgfedcba98765ZZZZZZ";
    const script = [
      `curl -sS -m 10 -o /dev/null -w "%{http_code}\\n" -H "Authorization: Bearer $GH_ENTERPRISE_TOKEN" https://127.0.0.1:${https}/sent`,
      `echo "enterprise=$GH_ENTERPRISE_TOKEN cloud=$GH_TOKEN"`,
    ].join("\n");
    const closed = client.closedOf("sent");
    const started = await startWith(client, "sent", ["/bin/bash", "-c", script], {}, { GH_ENTERPRISE_TOKEN: sent, GH_TOKEN: REAL });
    expect(started.error).toBeUndefined();
    await closed;
    const output = client.output("sent");
    expect(output).toMatch(/^200\nenterprise=ghp_masked[A-Za-z0-9]{31} cloud=ghp_masked[A-Za-z0-9]{30}\n$/);
    // The client's value, not the executor's, went to the enterprise host.
    expect(seen).toEqual([`https /sent Bearer ${sent}`]);
  });
});

/** A custom provider's credential in each server's environment: `vendor_` and 24 lower-case letters. */
const VENDOR = "vendor_realrealrealrealrealreal";
const VENDOR_PATTERN = "vendor_[a-z]{24}";
const PLACEHOLDER_SHAPE = /^vendor_[a-z]{24}$/;

async function startWith(client: WireClient, processId: string, argv: string[], proxy: Record<string, unknown>, env: Record<string, string> = {}) {
  const params = startParams(processId, argv, proxy);
  return client.request("process/start", { ...params, env: { ...params.env, ...env } });
}

async function runWith(client: WireClient, processId: string, script: string, proxy: Record<string, unknown>, env: Record<string, string> = {}): Promise<string> {
  const closed = client.closedOf(processId);
  const started = await startWith(client, processId, ["/bin/bash", "-c", script], proxy, env);
  expect(started.error).toBeUndefined();
  await closed;
  return client.output(processId);
}

describe.each(Object.keys(servers) as (keyof typeof servers)[])("custom credential providers on %s", (server) => {
  const serve = async (extra: Record<string, string> = {}) => WireClient.ready(await servers[server]({ ...executorEnv(), VENDOR_TOKEN: VENDOR, ...extra }));

  it("mask a matching value; the real one goes in Authorization only to the provider's URL prefixes", async () => {
    const { https, http, seen } = await targets();
    const client = await serve();
    const info = await client.call<{ capabilities: Record<string, boolean> }>("environment/info", null);
    expect(info.capabilities.credentialMaskingCustomProviders).toBe(true);
    const provider = { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: [`https://127.0.0.1:${https}/v1`, `http://127.0.0.1:${http}/v1`] };
    const script = [
      `for url in https://127.0.0.1:${https}/v1/a https://127.0.0.1:${https}/v1 https://127.0.0.1:${https}/v2/a https://127.0.0.1:${https}/v10 https://localhost:${https}/v1/a http://127.0.0.1:${http}/v1/a http://127.0.0.1:${http}/v2/a; do`,
      `  curl -sS -m 10 -o /dev/null -w "%{http_code} " -H "Authorization: Bearer $VENDOR_TOKEN" $url; done; echo`,
      `curl -sS -m 10 -o /dev/null -w "%{http_code}\\n" -H "x-api-key: $VENDOR_TOKEN" https://127.0.0.1:${https}/v1/header`,
      `echo "token=$VENDOR_TOKEN"`,
      `echo "brokered=$CODEX_NETWORK_PROXY_BROKERED_CREDENTIALS"`,
    ].join("\n");
    const output = await runWith(client, "custom", script, { credentialProviders: { vendor: provider } });
    const placeholder = /^token=(\S+)$/m.exec(output)?.[1] ?? "";
    expect(placeholder).toMatch(PLACEHOLDER_SHAPE);
    expect(placeholder).not.toBe(VENDOR);
    expect(output).not.toContain(VENDOR);
    // The built-in GitHub Enterprise token of executorEnv() is masked beside it.
    expect(output.replaceAll(placeholder, "<placeholder>").replace(/ghp_masked[A-Za-z0-9]+/g, "<gh>")).toBe(
      [
        "200 200 200 200 200 200 200 ",
        "200",
        "token=<placeholder>",
        `brokered=[["@alias:GH_ENTERPRISE_TOKEN","<gh>"],["@alias:VENDOR_TOKEN","<placeholder>"],["GH_ENTERPRISE_TOKEN","<gh>"],["VENDOR_TOKEN","<placeholder>"]]`,
        "",
      ].join("\n"),
    );
    const bearer = (token: string) => `Bearer ${token}`;
    expect(seen).toEqual([
      `https /v1/a ${bearer(VENDOR)}`,
      `https /v1 ${bearer(VENDOR)}`,
      `https /v2/a ${bearer(placeholder)}`,
      // A prefix ends at a segment boundary: /v1 is not a prefix of /v10.
      `https /v10 ${bearer(placeholder)}`,
      `https /v1/a ${bearer(placeholder)}`,
      `http /v1/a ${bearer(VENDOR)}`,
      `http /v2/a ${bearer(placeholder)}`,
      // The bearer method does not touch other headers.
      `https /v1/header -`,
    ]);
  });

  it("with header authentication and a destination from url_prefix_from_env, the real value goes only in that header there", async () => {
    const { https, seen, apiKeys } = await targets();
    const client = await serve({ VENDOR_URL: `https://127.0.0.1:${https}/dyn` });
    const provider = { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefix_from_env: "VENDOR_URL", auth: ["header"], header: "X-Api-Key", prefix: "Key " };
    const script = [
      `for url in https://127.0.0.1:${https}/dyn/a https://127.0.0.1:${https}/other; do`,
      `  curl -sS -m 10 -o /dev/null -w "%{http_code} " -H "x-api-key: Key $VENDOR_TOKEN" -H "Authorization: Bearer $VENDOR_TOKEN" $url; done`,
      `curl -sS -m 10 -o /dev/null -w "%{http_code}\\n" -H "x-api-key: $VENDOR_TOKEN" https://127.0.0.1:${https}/dyn/no-prefix`,
      `echo "token=$VENDOR_TOKEN"`,
    ].join("\n");
    const output = await runWith(client, "header", script, { credentialProviders: { vendor: provider } });
    const placeholder = /^token=(\S+)$/m.exec(output)?.[1] ?? "";
    expect(placeholder).toMatch(PLACEHOLDER_SHAPE);
    expect(output.replaceAll(placeholder, "<placeholder>")).toBe("200 200 200\ntoken=<placeholder>\n");
    expect(seen).toEqual([`https /dyn/a Bearer ${placeholder}`, `https /other Bearer ${placeholder}`, `https /dyn/no-prefix -`]);
    expect(apiKeys).toEqual([`Key ${VENDOR}`, `Key ${placeholder}`, placeholder]);
  });

  it("mask a value the client sends in env too, and Basic and token schemes when the provider lists them", async () => {
    const { https, seen } = await targets();
    const client = await serve();
    const sent = `vendor_${"client".repeat(4)}`;
    const provider = { env: ["CLIENT_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: [`https://127.0.0.1:${https}/v1`], auth: ["basic", "token"] };
    const script = [
      `curl -sS -m 10 -o /dev/null -w "%{http_code} " -u "user:$CLIENT_TOKEN" https://127.0.0.1:${https}/v1/basic`,
      `curl -sS -m 10 -o /dev/null -w "%{http_code} " -H "Authorization: token $CLIENT_TOKEN" https://127.0.0.1:${https}/v1/token`,
      `curl -sS -m 10 -o /dev/null -w "%{http_code}\\n" -H "Authorization: Bearer $CLIENT_TOKEN" https://127.0.0.1:${https}/v1/bearer`,
      `echo "token=$CLIENT_TOKEN"`,
    ].join("\n");
    const output = await runWith(client, "client", script, { credentialProviders: { vendor: provider } }, { CLIENT_TOKEN: sent });
    const placeholder = /^token=(\S+)$/m.exec(output)?.[1] ?? "";
    expect(placeholder).toMatch(PLACEHOLDER_SHAPE);
    expect(placeholder).not.toBe(sent);
    expect(seen).toEqual([
      `https /v1/basic Basic ${Buffer.from(`user:${sent}`).toString("base64")}`,
      `https /v1/token token ${sent}`,
      `https /v1/bearer Bearer ${placeholder}`,
    ]);
  });

  it("find a provider's credentials in variables it does not list, but not in paths, host names or cut out of a word, as upstream 0.171 does", async () => {
    const { https, seen } = await targets();
    // name: value in the executor's environment, and whether upstream masks it (measured against the 0.171 binary).
    const cases: [string, string, boolean][] = [
      ["B_WHOLE", "vendor_bbbbbbbbbbbbbbbbbbbbbbbb", true],
      ["B_EMBEDDED", "x=vendor_cccccccccccccccccccccccc;y", true],
      ["B_GLUED_START", "zzvendor_dddddddddddddddddddddddd;", true],
      ["B_USERINFO", "https://u:vendor_eeeeeeeeeeeeeeeeeeeeeeee@example.com/x", true],
      // Shorter than 16, but after a distinctive literal prefix (`tok_`, 4 characters).
      ["B_TOK", "x=tok_ffff;y", true],
      ["B_GH", "ghp_abcdefghijklmnopqrstuvwxyz0123ZZZZZZ", true],
      // Followed by a token character: cut out of a longer word.
      ["B_GLUED_END", "vendor_gggggggggggggggggggggggg-x", false],
      // Shorter than 16 with a short literal prefix (`k_`).
      ["B_SHORT", "x=k_hhhhhh;y", false],
      ["B_PATH", "/home/u/vendor_iiiiiiiiiiiiiiiiiiiiiiii/bin", false],
      ["B_RELATIVE", "a/vendor_jjjjjjjjjjjjjjjjjjjjjjjj", false],
      ["B_HOST", "https://vendor_kkkkkkkkkkkkkkkkkkkkkkkk.example.com/x", false],
      ["B_GH_PATH", "/p/ghp_cbcdefghijklmnopqrstuvwxyz0123ZZZZZZ/q", false],
      ["B_GH_SHORT", "ghp_abcdefgh", false],
      // Search paths are never searched.
      ["LIB_PATH", "vendor_llllllllllllllllllllllll", false],
    ];
    const client = await serve(Object.fromEntries(cases.map(([name, value]) => [name, value])));
    const prefix = `https://127.0.0.1:${https}/v1`;
    const providers = {
      vendor: { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: [prefix] },
      short: { env: ["SHORT_TOKEN"], patterns: ["k_[a-z]{6}"], url_prefixes: [prefix] },
      tok: { env: ["TOK_TOKEN"], patterns: ["tok_[a-z]{4}"], url_prefixes: [prefix] },
    };
    const shapes = "vendor_[a-z]{24}|k_[a-z]{6}|tok_[a-z]{4}|ghp_[A-Za-z0-9]{36}";
    const names = [...cases.map(([name]) => name), "C_EMBEDDED"];
    const script = [
      ...names.map((name) => `printf '%s\\n' "${name}=$${name}"`),
      `echo "VENDOR_TOKEN=$VENDOR_TOKEN"`,
      `echo "brokered=$CODEX_NETWORK_PROXY_BROKERED_CREDENTIALS"`,
      // Each credential-shaped word of each variable goes, as the process sees it, to the provider's prefix.
      ...names.map((name) => `for t in $(printf %s "$${name}" | grep -oE '${shapes}'); do curl -sS -m 10 -o /dev/null -H "Authorization: Bearer $t" ${prefix}/${name}; done`),
    ].join("\n");
    const sent = "x=vendor_mmmmmmmmmmmmmmmmmmmmmmmm;y";
    const output = await runWith(client, "discovered", script, { credentialProviders: providers }, { C_EMBEDDED: sent });
    const expected: Record<string, string> = { ...Object.fromEntries(cases.map(([name, value]) => [name, value])), C_EMBEDDED: sent };
    const masked = new Set([...cases.filter(([, , mask]) => mask).map(([name]) => name), "C_EMBEDDED"]);
    const shown = Object.fromEntries([...output.matchAll(/^(\w+)=(.*)$/gm)].map(([, name, value]) => [name!, value!]));
    // Each placeholder, named after the variable it was found in.
    const placeholders = new Map<string, string>();
    for (const name of names) {
      const real = new RegExp(shapes).exec(expected[name]!)?.[0];
      const fake = new RegExp(shapes.replace("ghp_[A-Za-z0-9]{36}", "ghp_masked[A-Za-z0-9]{30}")).exec(shown[name]!)?.[0];
      if (masked.has(name)) {
        expect(fake, name).toBeDefined();
        expect(shown[name], name).toBe(expected[name]!.replace(real!, fake!));
        placeholders.set(fake!, `<${name}>`);
      } else {
        expect(shown[name], name).toBe(expected[name]);
      }
    }
    placeholders.set(shown.VENDOR_TOKEN!, "<VENDOR_TOKEN>");
    const brokered = JSON.parse(shown.brokered!) as [string, string][];
    expect(brokered.map(([name, value]) => [name, placeholders.get(value) ?? (value.startsWith("ghp_masked") ? "<gh>" : value)]).sort()).toEqual(
      [
        ["@alias:GH_ENTERPRISE_TOKEN", "<gh>"], ["GH_ENTERPRISE_TOKEN", "<gh>"],
        ["@alias:VENDOR_TOKEN", "<VENDOR_TOKEN>"], ["VENDOR_TOKEN", "<VENDOR_TOKEN>"],
        // A found credential is registered under its provider's first variable.
        ...[...masked].flatMap((name) => [[`@alias:${name}`, `<${name}>`], [name === "B_GH" ? "GH_ENTERPRISE_TOKEN" : name === "B_TOK" ? "TOK_TOKEN" : "VENDOR_TOKEN", `<${name}>`]]),
      ].sort(),
    );
    // A found credential's placeholder gets the real value at the provider's prefix; an unmasked value went as it was.
    expect(seen).toEqual(
      names.flatMap((name) => {
        const real = new RegExp(shapes).exec(expected[name]!)?.[0];
        return real ? [`https /v1/${name} Bearer ${real}`] : [];
      }),
    );
  });

  it("leave everything as it was without credentialMasking, and for a login shell", async () => {
    const client = await serve();
    const provider = { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"] };
    expect(await runWith(client, "off", "echo $VENDOR_TOKEN", { credentialMasking: false, credentialProviders: { vendor: provider } })).toBe(`${VENDOR}\n`);
    const closed = client.closedOf("login");
    expect((await startWith(client, "login", ["/bin/bash", "-lc", "echo $VENDOR_TOKEN"], { credentialProviders: { vendor: provider } })).error).toBeUndefined();
    await closed;
    expect(client.output("login")).toBe(`${VENDOR}\n`);
  });

  it("refuse an auth method upstream does not know (-32602, serde's words)", async () => {
    const client = await serve();
    const provider = { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"], auth: ["digest"] };
    const refused = await startWith(client, "digest", ["/bin/bash", "-c", "true"], { credentialProviders: { vendor: provider } });
    expect(refused.error).toEqual({ code: ErrorCode.InvalidParams, message: "unknown variant `digest`, expected one of `bearer`, `token`, `basic`, `header`" });
  });
});

/** Providers upstream 0.171 cannot compile: it logs and skips them and starts the process unmasked; execmux refuses the start. */
const INVALID_PROVIDERS: [Record<string, unknown>, string][] = [
  [{ env: ["VENDOR_TOKEN"], url_prefixes: ["https://vendor.example/v1"] }, "credential provider `vendor` has no credential patterns"],
  [{ env: [], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"] }, "credential provider `vendor` has no environment keys"],
  [{ env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN] }, "credential provider `vendor` has no destination URL prefixes"],
  [{ env: ["VENDOR-TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"] }, "credential provider `vendor` has an invalid environment key"],
  [{ env: ["GH_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"] }, "credential provider `vendor` overlaps a built-in credential source"],
  [{ env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefix_from_env: "VENDOR_TOKEN" }, "credential provider `vendor` has an invalid host environment key"],
  [
    { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["http://vendor.example/v1"] },
    "invalid destination for credential provider `vendor`: credential destination must use HTTPS unless it targets loopback over HTTP",
  ],
  [
    { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1?x=1"] },
    "invalid destination for credential provider `vendor`: credential destination cannot include user information, a query, or a fragment",
  ],
  [
    { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"], header: "x-api-key" },
    "credential provider `vendor` requires a header name exactly when using header authentication",
  ],
  [
    { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"], prefix: "Key " },
    "credential provider `vendor` requires header authentication to use a header prefix",
  ],
  [
    { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"], auth: ["header"], header: "bad header" },
    "invalid header for credential provider `vendor`: invalid HTTP header name",
  ],
  [
    { env: ["VENDOR_TOKEN"], patterns: ["a*"], url_prefixes: ["https://vendor.example/v1"] },
    "invalid credential pattern for provider `vendor`: credential pattern must not match an empty value",
  ],
  [
    { env: ["VENDOR_TOKEN"], patterns: [`vendor_${"[a-z]".repeat(420)}`], url_prefixes: ["https://vendor.example/v1"] },
    "invalid credential pattern for provider `vendor`: credential pattern exceeds 2048 bytes",
  ],
];

describe("custom credential providers upstream cannot use", () => {
  const script = "echo token=$VENDOR_TOKEN";
  it("upstream starts the process with the value unmasked", async () => {
    const client = await WireClient.ready(await servers.upstream({ ...executorEnv(), VENDOR_TOKEN: VENDOR }));
    for (const [index, [provider]] of INVALID_PROVIDERS.entries()) {
      expect(await runWith(client, `invalid${index}`, script, { credentialProviders: { vendor: provider } })).toBe(`token=${VENDOR}\n`);
    }
  });

  it("execmux refuses the start (-32602, upstream's reason) and starts nothing", async () => {
    const client = await WireClient.ready(await servers.execmux({ ...executorEnv(), VENDOR_TOKEN: VENDOR }));
    for (const [index, [provider, message]] of INVALID_PROVIDERS.entries()) {
      const refused = await startWith(client, `invalid${index}`, ["/bin/bash", "-c", script], { credentialProviders: { vendor: provider } });
      expect(refused.error, message).toEqual({ code: ErrorCode.InvalidParams, message });
    }
    const valid = { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"] };
    const overlapping = await startWith(client, "overlap", ["/bin/bash", "-c", script], { credentialProviders: { a: valid, b: valid } });
    expect(overlapping.error?.message).toBe("credential provider `b` overlaps the environment source of credential provider `a`");
    // Each list may hold 64 patterns (the schema's bound); one start compiles at most 64 in all.
    const half = (key: string) => ({ env: [key], patterns: Array.from({ length: 33 }, (_, index) => `vendor${index}_[a-z]{24}`), url_prefixes: ["https://vendor.example/v1"] });
    const budget = await startWith(client, "budget", ["/bin/bash", "-c", script], { credentialProviders: { a: half("A_TOKEN"), b: half("B_TOKEN") } });
    expect(budget.error?.message).toBe("custom credential providers name 66 patterns; this exec-server compiles at most 64 per process start");
    const unknownField = await startWith(client, "shape", ["/bin/bash", "-c", script], { credentialProviders: { vendor: { ...valid, zzz: 1 } } });
    expect(unknownField.error?.code).toBe(ErrorCode.InvalidParams);
    const listed = await client.call<{ processes: { processId: string }[] }>("process/list", {});
    expect(listed.processes).toEqual([]);
  });
});

describe("the cost of masking one start on execmux", () => {
  it("is bounded: too much to search, or too many credentials found, refuses the start (LimitExceeded) and starts nothing", async () => {
    const client = await WireClient.ready(await servers.execmux({ ...executorEnv(), VENDOR_TOKEN: VENDOR }));
    const provider = { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: ["https://vendor.example/v1"] };
    const argv = ["/bin/bash", "-c", "true"];
    // 300 KB of values against four patterns: past the search budget (within --max-argv-env-bytes).
    const fourPatterns = { ...provider, patterns: [VENDOR_PATTERN, "vendorb_[a-z]{24}", "vendorc_[a-z]{24}", "vendord_[a-z]{24}"] };
    const searched = await startWith(client, "searched", argv, { credentialProviders: { vendor: fourPatterns } }, { BIG: "x".repeat(300_000) });
    expect(searched.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "credentialMasking" } });
    expect(searched.error?.message).toMatch(/^finding credentials would search more than 1048576 characters/);
    // 300 different credentials of the provider's shape in one unlisted variable: past the 256 a start may broker.
    const letters = (index: number) => Array.from({ length: 24 }, (_, at) => String.fromCharCode(97 + (Math.floor(index / 26 ** (at % 3)) % 26))).join("");
    const many = Array.from({ length: 300 }, (_, index) => `vendor_${letters(index)}`).join(" ");
    expect(new Set(many.split(" ")).size).toBe(300);
    const found = await startWith(client, "found", argv, { credentialProviders: { vendor: provider } }, { MANY: many });
    expect(found.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "credentialMasking" } });
    expect(found.error?.message).toMatch(/more than 256 credentials/);
    // A credential recognised but with no other value its pattern allows: refused, not handed over unmasked.
    const single = { env: ["ONLY_TOKEN"], patterns: ["only_token_value_x"], url_prefixes: ["https://vendor.example/v1"] };
    const unmaskable = await startWith(client, "unmaskable", argv, { credentialProviders: { single } }, { ONLY_TOKEN: "only_token_value_x" });
    expect(unmaskable.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "credentialMasking" } });
    expect(unmaskable.error?.message).toMatch(/no placeholder could be drawn for the credential in ONLY_TOKEN/);
    // An environment past --max-argv-env-bytes is refused before it is searched.
    const huge = await startWith(client, "huge", argv, { credentialProviders: { vendor: provider } }, { BIG: "x".repeat(1_100_000) });
    expect(huge.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "maxArgvEnvBytes" } });
    const listed = await client.call<{ processes: { processId: string }[] }>("process/list", {});
    expect(listed.processes).toEqual([]);
  });
});

describe("a sandboxed process with credential masking on execmux", () => {
  it("finds the real tokens nowhere it can read: its environment, the CA bundle's directory, /proc/*/environ, /proc/*/cmdline", async () => {
    const { https, seen: requests } = await targets();
    const stateDirectory = scratchDirectory("credmask-state");
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn", "--state-directory", stateDirectory], {
      ...executorEnv(),
      VENDOR_TOKEN: VENDOR,
      HOME: scratchDirectory("credmask-home"),
    });
    const client = await WireClient.ready(daemon.url);
    const project = realpathSync(scratchDirectory("credmask-project"));
    const sandbox = codexSandbox("workspace-write", project);
    const provider = { env: ["VENDOR_TOKEN"], patterns: [VENDOR_PATTERN], url_prefixes: [`https://127.0.0.1:${https}/v1`] };
    // Everything it can read goes to a file in its project; the test (outside) looks for the real values there.
    const script = [
      `out="$PWD/seen.txt"`,
      `{ env`,
      `  for file in "$(dirname "$SSL_CERT_FILE")"/*; do echo "== $file"; cat "$file"; done`,
      `  for pid in /proc/[0-9]*; do echo "== $pid"; tr '\\0' '\\n' < $pid/environ; tr '\\0' ' ' < $pid/cmdline; echo; done`,
      `} > "$out" 2>&1`,
      `echo "pids: $(ls -d /proc/[0-9]* | wc -l)"`,
      `[ -r /proc/$DAEMON_PID/environ ] && echo "daemon environ readable" || echo "daemon environ unreadable"`,
      `curl -sS -m 10 -o /dev/null -w "%{http_code}\\n" -H "Authorization: Bearer $VENDOR_TOKEN" https://127.0.0.1:${https}/v1/a`,
    ].join("\n");
    const closed = client.closedOf("sandboxed");
    const started = await client.request("process/start", {
      processId: "sandboxed",
      argv: ["/bin/bash", "-c", script],
      cwd: project,
      // Every variable of the executor, none held back by name (a real token would otherwise never reach env).
      envPolicy: INHERIT_ALL,
      env: { PATH: "/usr/bin:/bin", DAEMON_PID: String(daemon.child.pid) },
      tty: false,
      sandbox: { ...sandbox, permissions: { ...sandbox.permissions, network: "enabled" } },
      enforceManagedNetwork: true,
      networkProxy: { proxy: { ...PROXY, credentialMasking: true, credentialProviders: { vendor: provider } } },
    });
    expect(started.error, JSON.stringify(started.error)).toBeUndefined();
    expect(started.result).toMatchObject({ sandboxType: "linuxSeccomp" });
    await closed;
    const output = client.output("sandboxed");
    // The real value did go out, through the proxy, to the provider's destination.
    expect(output).toMatch(/^pids: \d+\ndaemon environ unreadable\n200\n$/);
    expect(requests).toEqual([`https /v1/a Bearer ${VENDOR}`]);
    const seen = readFileSync(join(project, "seen.txt"), "utf8");
    expect(seen).toContain("VENDOR_TOKEN=vendor_");
    expect(seen).toContain("GH_ENTERPRISE_TOKEN=ghp_masked");
    expect(seen).toContain("BEGIN CERTIFICATE");
    expect(seen).not.toContain(VENDOR);
    expect(seen).not.toContain(REAL);
  });
});
