/**
 * The real Codex agent with `[features] credential_masking` on (and the
 * executor-local proxy, shell snapshots, no login shell: masking covers
 * `bash -c` commands only), against the upstream exec-server and execmux
 * alike. Each server holds a GitHub Enterprise token in its own environment,
 * bound by GH_HOST to 127.0.0.1 where this test runs an HTTPS server: the
 * command the model asks for must see a placeholder, and the server must
 * receive the real token, put back by the executor's proxy.
 */
import { realpathSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, onTestFailed } from "vitest";
import { runCodexAgent } from "./helpers/codex-agent.js";
import { olderThan } from "./helpers/differential.js";
import { MockModel, type Turn } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { TEST_LEAF_CERT, TEST_LEAF_KEY } from "./helpers/tls-fixture.js";
import { upstreamVersion } from "./helpers/upstream.js";
import { executorEnv, maskingServers, REAL_TOKEN } from "./helpers/credential-masking-servers.js";
import { WsTap } from "./helpers/ws-tap.js";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A loopback HTTPS server recording the Authorization of each request. */
async function credentialedTarget(): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer({ key: TEST_LEAF_KEY, cert: TEST_LEAF_CERT }, (request, response) => {
    seen.push(`${request.url} ${request.headers.authorization ?? "-"}`);
    response.end("ok\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => server.close());
  return { port: (server.address() as AddressInfo).port, seen };
}

describe.each(Object.keys(maskingServers) as (keyof typeof maskingServers)[])("the Codex agent with credential masking on and %s as its environment", (server) => {
  // Credential masking came with 0.171.0: an older agent (EXECMUX_UPSTREAM_CODEX_VERSION) never asks for it.
  it.skipIf(olderThan(upstreamVersion, "0.171.0"))("runs the command with a placeholder, and the server gets the real token", async () => {
    const target = await credentialedTarget();
    const tap = await WsTap.start(await maskingServers[server](executorEnv()));
    const command = `curl -sS -m 10 -o /dev/null -w "status %{http_code}\\n" -H "Authorization: Bearer $GH_ENTERPRISE_TOKEN" https://127.0.0.1:${target.port}/agent; echo "token=$GH_ENTERPRISE_TOKEN"`;
    const turns: Turn[] = [() => ({ calls: [{ name: "exec_command", arguments: { cmd: command } }] }), () => ({ message: "done" })];
    const model = await MockModel.start(turns);
    onTestFailed(() => console.log(`[${server}] transcript:\n${tap.transcript()}`));
    const run = await runCodexAgent({
      execServerUrl: tap.url,
      modelBaseUrl: model.baseUrl,
      projectDir: realpathSync(scratchDirectory("agent-credmask-project")),
      prompt: "Call the API.",
      networkProfile: { domains: { "127.0.0.1": "allow" } },
      features: { credential_masking: true, shell_snapshot_v2: true },
      topLevel: ["allow_login_shell = false"],
    });

    expect(model.failures, run.stderr).toEqual([]);
    expect(run, run.stderr).toMatchObject({ exitCode: 0, timedOut: false });
    const output = model.toolResults[0]!.output;
    expect(output).toContain("status 200");
    expect(output).toMatch(/token=ghp_masked[A-Za-z0-9]{30}\b/);
    expect(output).not.toContain(REAL_TOKEN);
    expect(target.seen).toEqual([`/agent Bearer ${REAL_TOKEN}`]);
    const [start] = tap.requestsFor("process/start");
    expect(start).toMatchObject({ networkProxy: { proxy: { credentialMasking: true } } });
  });
});
