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
import { writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { spawnDaemon } from "./helpers/cli.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { TEST_CA_CERT, TEST_LEAF_CERT, TEST_LEAF_KEY } from "./helpers/tls-fixture.js";
import { startUpstreamExecServer } from "./helpers/upstream.js";
import { WireClient } from "./helpers/wire-client.js";

/** A GitHub-shaped token (the prefix is what upstream's provider recognises). */
const REAL = "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";

const PROXY = {
  enabled: true,
  enableSocks5: true,
  enableSocks5Udp: true,
  allowUpstreamProxy: false,
  dangerouslyAllowAllUnixSockets: false,
  mode: "full",
  domains: { "127.0.0.1": "allow", localhost: "allow" },
  unixSockets: null,
  allowLocalBinding: false,
};
const AUDIT = { conversationId: "c", appVersion: "0.171.0", userAccountId: null, authMode: null, originator: "codex_exec", userEmail: null, terminalType: "unknown", model: "m", slug: "m" };
const INHERIT_ALL = { inherit: "all", ignoreDefaultExcludes: true, exclude: [], set: {}, includeOnly: [] };

const startParams = (processId: string, argv: string[], proxy: Record<string, unknown> = {}) => ({
  processId,
  argv,
  cwd: "file:///tmp",
  envPolicy: INHERIT_ALL,
  env: { PATH: "/usr/bin:/bin" },
  tty: false,
  pipeStdin: false,
  arg0: null,
  sandbox: null,
  enforceManagedNetwork: false,
  managedNetwork: null,
  networkProxy: { proxy: { ...PROXY, credentialMasking: true, ...proxy }, auditMetadata: AUDIT, environmentId: "remote", executionId: "e1" },
});

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A loopback HTTPS and a plain HTTP server that record what Authorization each request carried. */
async function targets(): Promise<{ https: number; http: number; seen: string[] }> {
  const seen: string[] = [];
  const record = (scheme: string) => (request: IncomingMessage, response: ServerResponse) => {
    seen.push(`${scheme} ${request.url} ${request.headers.authorization ?? "-"}`);
    response.end("ok\n");
  };
  const https = createHttpsServer({ key: TEST_LEAF_KEY, cert: TEST_LEAF_CERT }, record("https"));
  const http = createHttpServer(record("http"));
  for (const server of [https, http]) {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => server.close());
  }
  return { https: (https.address() as AddressInfo).port, http: (http.address() as AddressInfo).port, seen };
}

/** The executor's own environment: the token, the host it is bound to, the CA its proxy is to trust. */
function executorEnv(): Record<string, string> {
  const ca = join(scratchDirectory("credmask-ca"), "ca.pem");
  writeFileSync(ca, TEST_CA_CERT);
  return { GH_ENTERPRISE_TOKEN: REAL, GH_HOST: "127.0.0.1", SSL_CERT_FILE: ca };
}

const servers = {
  upstream: async (env: Record<string, string>) => {
    // launchUpstream passes the test's own environment on.
    const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
    Object.assign(process.env, env);
    try {
      return (await startUpstreamExecServer()).url;
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  },
  execmux: async (env: Record<string, string>) =>
    (await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { ...env, HOME: scratchDirectory("credmask-home") })).url,
};

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
        ...CA_KEYS.filter((key) => key !== "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE" || !process.env[key]).map((key) => `ca ${key}`),
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
});

describe("custom credential providers on execmux", () => {
  it("are refused (-32602) and the process is not started: capability credentialMaskingCustomProviders is false", async () => {
    const client = await WireClient.ready(await servers.execmux(executorEnv()));
    const info = await client.call<{ capabilities: Record<string, boolean> }>("environment/info", null);
    expect(info.capabilities.credentialMaskingCustomProviders).toBe(false);
    const provider = { env: ["TEST_TOKEN"], url_prefixes: ["https://127.0.0.1:8443/"] };
    const refused = await client.request("process/start", startParams("custom", ["/bin/bash", "-c", "true"], { credentialProviders: { test: provider } }));
    expect(refused.error).toEqual({
      code: ErrorCode.InvalidParams,
      message: "custom credential providers are not supported by this exec-server (capability credentialMaskingCustomProviders is false): the process was not started",
    });
    const unknownField = await client.request("process/start", startParams("shape", ["/bin/bash", "-c", "true"], { credentialProviders: { test: { zzz: 1 } } }));
    expect(unknownField.error?.code).toBe(ErrorCode.InvalidParams);
    const listed = await client.call<{ processes: { processId: string }[] }>("process/list", {});
    expect(listed.processes.map((process) => process.processId)).not.toContain("custom");
  });
});
