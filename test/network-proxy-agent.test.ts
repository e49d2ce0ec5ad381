/**
 * The real Codex agent with `[features] network_proxy = true` and a
 * permission profile whose network goes through the executor-local proxy,
 * against the upstream exec-server and execmux alike: a command fetches from
 * a loopback HTTP server this test starts, once by a name the profile allows
 * and once by one it denies. Loopback is reachable through the proxy only
 * because the profile names `127.0.0.1` exactly (a local literal needs that,
 * or allow_local_binding); `localhost`, the same server, is on the deny list.
 * The agent sends the policy with process/start (`networkProxy`), the
 * executor enforces it, and reports each verdict (network/policyDecision).
 * With a `transparent_tcp` profile, connections that ignore the proxy
 * variables are carried through the same policy (a target off loopback, since
 * loopback inside the sandbox is the sandbox's own).
 */
import { realpathSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, it, onTestFailed } from "vitest";
import { runCodexAgent, type NetworkProfile } from "./helpers/codex-agent.js";
import { spawnDaemon } from "./helpers/cli.js";
import { MockModel, type Turn } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { olderThan } from "./helpers/differential.js";
import { startUpstreamExecServer, upstreamVersion } from "./helpers/upstream.js";
import { WsTap } from "./helpers/ws-tap.js";

const execServers = {
  upstream: async () => (await startUpstreamExecServer()).url,
  execmux: async () => (await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { HOME: scratchDirectory("agent-proxy-home") })).url,
};

const targets: Server[] = [];
afterEach(() => {
  for (const target of targets.splice(0)) target.close();
});

/** A server on loopback (or `host`) that records the paths it was asked for. */
async function loopbackTarget(host = "127.0.0.1"): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  const target = createServer((request, response) => {
    seen.push(request.url ?? "");
    response.end(`target saw ${request.url}\n`);
  });
  targets.push(target);
  await new Promise<void>((resolve) => target.listen(0, host, resolve));
  return { port: (target.address() as AddressInfo).port, seen };
}

async function runWithProfile(server: keyof typeof execServers, profile: NetworkProfile, command: string) {
  const tap = await WsTap.start(await execServers[server]());
  const turns: Turn[] = [() => ({ calls: [{ name: "exec_command", arguments: { cmd: command } }] }), () => ({ message: "fetched" })];
  const model = await MockModel.start(turns);
  onTestFailed(() => console.log(`[${server}] transcript:\n${tap.transcript()}`));
  const project = realpathSync(scratchDirectory("agent-proxy-project"));
  const run = await runCodexAgent({ execServerUrl: tap.url, modelBaseUrl: model.baseUrl, projectDir: project, prompt: "Fetch.", networkProfile: profile });
  return { tap, model, run };
}

const PROFILE: NetworkProfile = { domains: { "127.0.0.1": "allow", localhost: "deny" } };

describe.each(Object.keys(execServers) as (keyof typeof execServers)[])("the Codex agent with network_proxy on and %s as its environment", (server) => {
  it("reaches the allowed name and is refused the denied one", async () => {
    const target = await loopbackTarget();
    const { tap, model, run } = await runWithProfile(
      server,
      PROFILE,
      `curl -s -m 10 http://127.0.0.1:${target.port}/allowed; echo "allowed exit $?"; curl -s -m 10 http://localhost:${target.port}/denied; echo; echo "denied exit $?"`,
    );

    expect(model.failures, run.stderr).toEqual([]);
    expect(run, run.stderr).toMatchObject({ exitCode: 0, timedOut: false });
    const output = model.toolResults[0]!.output;
    expect(output).toContain("target saw /allowed\nallowed exit 0");
    expect(output).toContain('"reason":"denied"');
    expect(output).toContain("Domain denied by the sandbox policy.");
    expect(target.seen).toEqual(["/allowed"]);
    // The policy went with the start, and the executor confined the process.
    const [start] = tap.exchanges().filter(({ request }) => request.method === "process/start");
    expect(start!.request.params).toMatchObject({
      enforceManagedNetwork: true,
      networkProxy: { proxy: { enabled: true, domains: { "127.0.0.1": "allow", localhost: "deny" } } },
    });
    expect(start!.reply?.result).toMatchObject({ sandboxType: "linuxSeccomp" });
    const decisions = tap.frames.filter((frame) => frame.message?.method === "network/policyDecision").map((frame) => frame.message!.params);
    expect(decisions).toEqual([
      expect.objectContaining({ decision: "allow", host: "127.0.0.1", port: target.port, protocol: "http" }),
      expect.objectContaining({ decision: "deny", reason: "denied", host: "localhost", port: target.port, protocol: "http" }),
    ]);
  });
});

/** Transparent TCP needs a destination off loopback: this machine's first non-internal IPv4 address (a private one, named exactly). */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry?.family === "IPv4" && !entry.internal)?.address;

describe.each(Object.keys(execServers) as (keyof typeof execServers)[])("the Codex agent with a transparent_tcp profile and %s as its environment", (server) => {
  // transparent_tcp came with 0.171.0: an older agent (EXECMUX_UPSTREAM_CODEX_VERSION) never asks for it.
  it.skipIf(olderThan(upstreamVersion, "0.171.0"))("carries a connection that ignores the proxy variables through the policy", async () => {
    if (!externalAddress) throw new Error("this test needs a non-loopback IPv4 address on this machine");
    const target = await loopbackTarget(externalAddress);
    const profile: NetworkProfile = { domains: { [externalAddress]: "allow", "denied.example": "deny" }, transparentTcp: true };
    // --noproxy '*': no proxy variable is used; only transparent TCP can carry these.
    const { tap, model, run } = await runWithProfile(
      server,
      profile,
      `curl -sS -m 10 --noproxy '*' http://${externalAddress}:${target.port}/transparent; echo "allowed exit $?"; curl -sS -m 10 --noproxy '*' http://denied.example/ 2>&1; echo "denied exit $?"`,
    );

    expect(model.failures, run.stderr).toEqual([]);
    expect(run, run.stderr).toMatchObject({ exitCode: 0, timedOut: false });
    const output = model.toolResults[0]!.output;
    expect(output).toContain("target saw /transparent\nallowed exit 0");
    // Refused: the connection is reset; curl reports it while connecting (7) or after (56), as the verdict's
    // reset races curl's own check that its connection is up.
    expect(output).toMatch(/Connection reset by peer\ndenied exit 56|Couldn't connect to server\ndenied exit 7/);
    expect(target.seen).toEqual(["/transparent"]);
    expect(tap.requestsFor("process/start")).toEqual([
      expect.objectContaining({ networkProxy: expect.objectContaining({ proxy: expect.objectContaining({ transparentTcp: true }) }) }),
    ]);
    const decisions = tap.frames.filter((frame) => frame.message?.method === "network/policyDecision").map((frame) => frame.message!.params);
    expect(decisions).toEqual([
      expect.objectContaining({ decision: "allow", host: externalAddress, port: target.port, protocol: "socks5_tcp" }),
      expect.objectContaining({ decision: "deny", reason: "denied", host: "denied.example", protocol: "socks5_tcp" }),
    ]);
  });
});
