/**
 * Credential masking (upstream's credential broker, `networkProxy.proxy.
 * credentialMasking`) is not served: environment/info says so, and a
 * process/start that asks for it anyway is refused rather than started with
 * the real credentials the client wanted hidden. The Codex agent, told the
 * capability is false, does not ask (it warns and leaves the field out).
 */
import { describe, expect, it } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { WireClient } from "./helpers/wire-client.js";

const PROXY = {
  enabled: true,
  enableSocks5: true,
  enableSocks5Udp: true,
  allowUpstreamProxy: false,
  dangerouslyAllowAllUnixSockets: false,
  mode: "full",
  domains: { "api.github.com": "allow" },
  unixSockets: null,
  allowLocalBinding: false,
};

const startWith = (processId: string, proxy: Record<string, unknown>) => ({
  processId,
  argv: ["true"],
  cwd: "/",
  env: { PATH: "/usr/bin:/bin" },
  tty: false,
  networkProxy: { proxy: { ...PROXY, ...proxy } },
});

describe("credential masking", () => {
  it("is reported false, and a process/start that asks for it is refused and not started", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const info = await client.call<{ capabilities: Record<string, boolean> }>("environment/info", null);
    expect(info.capabilities).toMatchObject({ credentialMasking: false, credentialMaskingCustomProviders: false });

    const refused = await client.request("process/start", startWith("masked", { credentialMasking: true }));
    expect(refused.error).toEqual({
      code: ErrorCode.InvalidParams,
      message: "credential masking is not supported by this exec-server (capability credentialMasking is false): the process was not started",
    });
    const listed = await client.call<{ processes: { processId: string }[] }>("process/list", {});
    expect(listed.processes.map((process) => process.processId)).not.toContain("masked");

    const plain = await client.request("process/start", startWith("plain", { credentialMasking: false }));
    expect(plain.error).toBeUndefined();
    expect(plain.result).toMatchObject({ processId: "plain" });
    client.close();
  });
});
