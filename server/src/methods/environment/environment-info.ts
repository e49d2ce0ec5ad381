/**
 * What `environment/info` (and `initialize`'s `environmentInfo`) says about
 * this executor, computed once: the values do not change while the daemon runs.
 */
import { existsSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename } from "node:path";
import { UPSTREAM_PROTOCOL_VERSION, pathToFileUri } from "@execmux/shared/core";
import type { EnvironmentCapabilities, EnvironmentInfo } from "@execmux/shared";
import { sandboxSupport, transparentTcpSupported } from "../../sandbox/support.js";

/**
 * False for everything execmux does not implement: clients gate the request
 * fields and methods behind each on it, so an unmodified Codex never sends
 * what execmux cannot serve.
 */
const CAPABILITIES: EnvironmentCapabilities = {
  networkProxyLaunch: true,
  networkProxyReviewDomains: true,
  /** Replaced by what this host can do (sandbox/support.ts transparentTcpSupported). */
  networkProxyTransparentTcp: false,
  capabilityDiscoverySandbox: true,
  capabilityDiscoveryV2: true,
  environmentConfigRead: true,
  httpHeaderEnvVars: true,
  sandboxedFileStreaming: true,
  /** process/start's shellSnapshot (server/src/shell-snapshot/). */
  shellSnapshotV2: true,
  windowsMxc: false,
  fsWatchMissing: true,
  fileWriteStreaming: true,
  /** network-proxy/credential-broker.ts, mitm-front.ts (test/credential-masking.test.ts against upstream). */
  credentialMasking: true,
  /** network-proxy/custom-providers.ts (test/credential-masking.test.ts against upstream). */
  credentialMaskingCustomProviders: true,
  linuxRootWritePreservesDevices: true,
  /** A grant on a root metadata link does not open a denied target (sandbox/resolve-policy.ts withoutReopenedDenials). */
  linuxApprovedRootWritePreservesRestrictions: true,
};

/** The user's login shell, as upstream reports it; bash, then sh, when $SHELL is unset or gone. */
function defaultShell(): { name: string; path: string } {
  const candidates = [process.env.SHELL, "/bin/bash", "/bin/sh"].filter((path): path is string => Boolean(path));
  const path = candidates.find((candidate) => existsSync(candidate)) ?? "/bin/sh";
  return { name: basename(path), path };
}

let cached: Promise<EnvironmentInfo> | undefined;

export function environmentInfo(): Promise<EnvironmentInfo> {
  cached ??= describe();
  return cached;
}

async function describe(): Promise<EnvironmentInfo> {
  return {
    shell: defaultShell(),
    // The protocol served, not execmux's own version: agents gate features on it (shared/src/upstream-version.ts).
    executorVersion: UPSTREAM_PROTOCOL_VERSION,
    cwd: pathToFileUri(process.cwd()),
    userHomeDir: pathToFileUri(homedir()),
    platformOs: process.platform,
    prependPathDirs: [],
    // Upstream lists TMPDIR only, and nothing when it is unset.
    temporaryDirectories: process.env.TMPDIR ? [pathToFileUri(process.env.TMPDIR)] : [],
    tempDir: pathToFileUri(tmpdir()),
    capabilities: { ...CAPABILITIES, networkProxyTransparentTcp: await transparentTcpSupported() },
    sandbox: await sandboxSupport(),
  };
}
