/**
 * The two exec-servers the credential-masking tests compare, each started
 * with a GitHub Enterprise token in its own environment, bound by GH_HOST to
 * 127.0.0.1 (how the binary can be pointed at a loopback host), and
 * SSL_CERT_FILE naming the test CA, so that its proxy trusts the loopback
 * HTTPS server a test starts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnDaemon } from "./cli.js";
import { scratchDirectory } from "./scratch.js";
import { TEST_CA_CERT } from "./tls-fixture.js";
import { startUpstreamExecServer } from "./upstream.js";

/** A GitHub-shaped token (the prefix is what upstream's provider recognises). */
export const REAL_TOKEN = "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";

/** The executor's own environment: the token, the host it is bound to, the CA its proxy is to trust. */
export function executorEnv(): Record<string, string> {
  const ca = join(scratchDirectory("credmask-ca"), "ca.pem");
  writeFileSync(ca, TEST_CA_CERT);
  return { GH_ENTERPRISE_TOKEN: REAL_TOKEN, GH_HOST: "127.0.0.1", SSL_CERT_FILE: ca };
}

/** Each server's URL, started with `env` added to its environment. */
export const maskingServers = {
  upstream: async (env: Record<string, string>) => {
    // startUpstreamExecServer passes the test's own environment on.
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
