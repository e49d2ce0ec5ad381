/**
 * Request frames as today's Codex client builds them, for the differential
 * cases (test/upstream-differential.test.ts): each returns a step. `<scratch>`
 * and `<http>` are filled in per server when the step runs.
 */
import { CODEX_INITIALIZE } from "./differential-case.js";

/** initialize as the Codex client sends it, with `extra` params (resumeSessionId, unknown fields). */
export const initialize = (extra: Record<string, unknown> = {}) => ({ request: "initialize", params: { ...CODEX_INITIALIZE, ...extra } });
export const initialized = { send: { method: "initialized", params: {} } };

export const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", LC_ALL: "C.UTF-8" };
/** process/start as today's client serializes it (every always-serialized key present), running `sh -c script`. */
export const startParams = (processId: string, script: string, overrides: Record<string, unknown> = {}) => ({
  processId,
  argv: ["/bin/sh", "-c", script],
  cwd: "file://<scratch>",
  envPolicy: null,
  env: ENV,
  tty: false,
  pipeStdin: false,
  arg0: null,
  sandbox: null,
  enforceManagedNetwork: false,
  managedNetwork: null,
  ...overrides,
});
/** networkProxy.proxy as the 0.171 agent sends it with `[features] network_proxy`, allowing or denying `domains`. */
export const codexProxy = (domains: Record<string, string>) => ({
  enabled: true,
  enableSocks5: true,
  enableSocks5Udp: true,
  allowUpstreamProxy: false,
  dangerouslyAllowAllUnixSockets: false,
  mode: "full",
  domains,
  unixSockets: null,
  allowLocalBinding: false,
});
/** networkProxy.auditMetadata as the agent sends it. */
export const CODEX_AUDIT = { conversationId: "c", appVersion: "0.171.0", userAccountId: null, authMode: null, originator: "codex_exec", userEmail: null, terminalType: "unknown", model: "m", slug: "m" };
export const start = (processId: string, script: string, overrides: Record<string, unknown> = {}) => ({
  request: "process/start",
  params: startParams(processId, script, overrides),
});
export const events = (processId: string) => ({ processEvents: processId });
export const terminate = (processId: string) => ({ request: "process/terminate", params: { processId } });
export const read = (processId: string, extra: Record<string, unknown> = {}) => ({ request: "process/read", params: { processId, ...extra } });
export const write = (processId: string, text: string, writeId?: string) => ({
  request: "process/write",
  params: { processId, chunk: Buffer.from(text).toString("base64"), ...(writeId === undefined ? {} : { writeId }) },
});
/** A process that runs until terminated (and is, at the end of its case). */
/** A profile entry: the whole disk readable. */
export const ROOT_READ = { path: { type: "special", value: { kind: "root" } }, access: "read" };
/** A managed permission profile that reads the whole disk, `entries` on top, its network restricted. */
export const readsDisk = (...entries: unknown[]) => ({
  type: "managed",
  file_system: { type: "restricted", entries: [ROOT_READ, ...entries] },
  network: "restricted",
});

export const LONG = "sleep 10";

/** The frame a Codex agent in workspace-write mode sent (real-clients.md), pointed at the scratch directory. */
export const codexWorkspaceWriteStart = {
  processId: "24431-66e3cd55-0d55-4a1c-9d0f-1f0f3f1e2a11",
  metadata: { threadId: "01a204a8-5b7e-4a0c-8f41-7d2b9c3e5f60", toolCallId: "call_1" },
  argv: ["/bin/bash", "-lc", "echo hello-from-remote; pwd"],
  cwd: "file://<scratch>",
  envPolicy: {
    inherit: "all",
    ignoreDefaultExcludes: true,
    exclude: ["CODEX_PERMISSION_PROFILE", "CODEX_VERSION", "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS", "CODEX_PLUGIN_METRICS_OUTPUT"],
    set: {},
    includeOnly: [],
  },
  // HOME is ours: the servers run with different ones, and bash -l reads its profile.
  env: { NO_COLOR: "1", GIT_PAGER: "cat", CODEX_SANDBOX_NETWORK_DISABLED: "1", PAGER: "cat", LC_ALL: "C.UTF-8", TERM: "dumb", HOME: "<scratch>" },
  tty: false,
  pipeStdin: false,
  arg0: null,
  sandbox: {
    permissions: {
      type: "managed",
      file_system: {
        type: "restricted",
        entries: [
          { path: { type: "special", value: { kind: "root" } }, access: "read" },
          { path: { type: "special", value: { kind: "project_roots" } }, access: "write" },
          { path: { type: "special", value: { kind: "slash_tmp" } }, access: "write" },
          { path: { type: "special", value: { kind: "tmpdir" } }, access: "write" },
          { path: { type: "special", value: { kind: "project_roots", subpath: ".git" } }, access: "read", missing_path_behavior: "skip" },
          { path: { type: "special", value: { kind: "project_roots", subpath: ".agents" } }, access: "read", missing_path_behavior: "skip" },
          { path: { type: "special", value: { kind: "project_roots", subpath: ".codex" } }, access: "read", missing_path_behavior: "skip" },
          { path: { type: "special", value: { kind: "project_roots", subpath: ".aws" } }, access: "read", missing_path_behavior: "skip" },
        ],
      },
      network: "restricted",
    },
    cwd: "file://<scratch>",
    workspaceRoots: ["file://<scratch>"],
    windowsSandboxLevel: "disabled",
    windowsSandboxProxySettingsMode: "reconcile",
    useLegacyLandlock: false,
  },
  enforceManagedNetwork: false,
  managedNetwork: null,
};

/** A file URI in the server's scratch directory. */
export const uri = (name: string) => `file://<scratch>/${name}`;
export const fs = (method: string, params: Record<string, unknown>) => ({ request: `fs/${method}`, params });
export const open = (handleId: string, name: string) => fs("open", { handleId, path: uri(name) });
export const readBlock = (handleId: string, offset: number, len: number) => fs("readBlock", { handleId, offset, len });
/** An http/request to the family's loopback target (test/helpers/http-target.ts). */
export const http = (requestId: string, path: string, extra: Record<string, unknown> = {}) => ({
  request: "http/request",
  params: { method: "GET", url: `<http>${path}`, requestId, ...extra },
});
