/**
 * The real Codex agent (`codex exec`, the same binary as the upstream
 * exec-server) with a scripted model, using an exec-server as its remote
 * environment: CODEX_EXEC_SERVER_URL makes every command and file access of
 * the agent go over that server's WebSocket.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { scratchDirectory } from "./scratch.js";
import { upstreamCodex } from "./upstream.js";

export type SandboxMode = "danger-full-access" | "workspace-write";

export interface AgentOptions {
  /** ws:// URL of the exec-server the agent uses as its environment (CODEX_EXEC_SERVER_URL)... */
  readonly execServerUrl?: string;
  /** ...or the text of $CODEX_HOME/environments.toml, naming its environments instead. */
  readonly environmentsToml?: string;
  /** The scripted model's provider base URL (MockModel.baseUrl). */
  readonly modelBaseUrl: string;
  /** The project directory (`-C`): the agent's cwd on the remote. */
  readonly projectDir: string;
  readonly prompt: string;
  readonly sandboxMode?: SandboxMode;
  /**
   * Instead of a sandbox mode: Codex's workspace permission profile with its
   * network through the executor-local proxy (`[features] network_proxy`),
   * these domains allowed or denied, and transparent TCP when asked.
   */
  readonly networkProfile?: NetworkProfile;
  /** A permission profile to select (`default_permissions`), defined in `configTables`, instead of a sandbox mode. */
  readonly defaultPermissions?: string;
  /** More `[features]` flags (beside network_proxy, which a network profile sets). */
  readonly features?: Readonly<Record<string, boolean>>;
  /** More top-level TOML keys (`allow_login_shell = false`), before every table. */
  readonly topLevel?: readonly string[];
  /** More TOML tables, appended after everything else (`[plugins."x@y"]`, `[shell_environment_policy]`). */
  readonly configTables?: readonly string[];
  /** More variables for the agent's own environment (a credential the executor is to mask, say). */
  readonly env?: Readonly<Record<string, string>>;
  /** A run that has not finished by then is killed, so a stuck agent fails with its output instead of a bare test timeout. */
  readonly timeoutMs?: number;
}

export interface AgentRun {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * With only config.toml, a model Codex does not know gets fallback metadata
 * that offers no apply_patch tool. This catalog entry (the fields Codex
 * requires, read from its parse errors) gives the mock model Codex's own
 * freeform apply_patch tool, the file-editing tool real models use.
 */
const MODEL_CATALOG = {
  models: [
    {
      slug: "mock-model",
      display_name: "mock-model",
      base_instructions: "You are a scripted test model.",
      apply_patch_tool_type: "freeform",
      shell_type: "shell_command",
      supported_reasoning_levels: [],
      visibility: "list",
      supported_in_api: true,
      priority: 1,
      support_verbosity: false,
      truncation_policy: { mode: "tokens", limit: 10_000 },
      experimental_supported_tools: [],
    },
  ],
};

export interface NetworkProfile {
  readonly domains: Readonly<Record<string, "allow" | "deny">>;
  readonly transparentTcp?: boolean;
}

/** A permission profile extending `:workspace`, its network enabled through the proxy (permission profiles cannot sit beside sandbox_mode). */
function networkProfileToml(profile: NetworkProfile): string[] {
  return [
    `[permissions.proxied]`,
    `extends = ":workspace"`,
    `[permissions.proxied.network]`,
    `enabled = true`,
    ...(profile.transparentTcp ? [`transparent_tcp = true`] : []),
    `[permissions.proxied.network.domains]`,
    ...Object.entries(profile.domains).map(([domain, permission]) => `${JSON.stringify(domain)} = "${permission}"`),
  ];
}

function configToml(options: AgentHomeOptions, catalogPath: string): string {
  const { modelBaseUrl, networkProfile } = options;
  const sandboxMode = options.sandboxMode ?? "danger-full-access";
  const features = { ...(networkProfile ? { network_proxy: true } : {}), ...options.features };
  return [
    `model = "mock-model"`,
    `model_provider = "mock"`,
    `model_catalog_json = ${JSON.stringify(catalogPath)}`,
    `approval_policy = "never"`,
    options.defaultPermissions ? `default_permissions = "${options.defaultPermissions}"` : networkProfile ? `default_permissions = "proxied"` : `sandbox_mode = "${sandboxMode}"`,
    ...(options.topLevel ?? []),
    `[model_providers.mock]`,
    `name = "mock"`,
    `base_url = ${JSON.stringify(modelBaseUrl)}`,
    `wire_api = "responses"`,
    // One try: a request the script did not expect fails the run instead of being replayed.
    `request_max_retries = 0`,
    `stream_max_retries = 0`,
    // Tables last: every key after a table header belongs to it.
    ...(Object.keys(features).length > 0 ? [`[features]`, ...Object.entries(features).map(([name, on]) => `${name} = ${on}`)] : []),
    ...(networkProfile ? networkProfileToml(networkProfile) : []),
    ...(options.configTables ?? []),
    "",
  ].join("\n");
}

const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  running.clear();
});

/** What configures the agent, whichever way it is run (`codex exec` here, `codex app-server` in codex-app-server.ts). */
export type AgentHomeOptions = Omit<AgentOptions, "projectDir" | "prompt" | "timeoutMs">;

/**
 * A scratch HOME with the agent's config.toml (and environments.toml) in it;
 * returns the environment to run the agent in.
 */
export function prepareAgentHome(options: AgentHomeOptions): NodeJS.ProcessEnv {
  const home = scratchDirectory("agent-home");
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  const catalogPath = join(codexHome, "mock-model-catalog.json");
  writeFileSync(catalogPath, JSON.stringify(MODEL_CATALOG));
  writeFileSync(join(codexHome, "config.toml"), configToml(options, catalogPath));
  if (options.environmentsToml !== undefined) writeFileSync(join(codexHome, "environments.toml"), options.environmentsToml, { mode: 0o600 });
  // Not the developer's environment: an OPENAI_BASE_URL or CODEX_HOME there would send the agent elsewhere.
  return {
    PATH: process.env.PATH,
    HOME: home,
    CODEX_HOME: codexHome,
    OPENAI_API_KEY: "dummy",
    ...(options.execServerUrl !== undefined ? { CODEX_EXEC_SERVER_URL: options.execServerUrl } : {}),
    ...options.env,
  };
}

/** Runs `codex exec` once with a scratch HOME; resolves when it exits (or was killed at the timeout). */
export async function runCodexAgent(options: AgentOptions): Promise<AgentRun> {
  const env = prepareAgentHome(options);
  const child = spawn(upstreamCodex(), ["exec", "--skip-git-repo-check", "-C", options.projectDir, options.prompt], {
    env,
    // stdin is /dev/null: `codex exec` reads more prompt from a pipe until it closes.
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (data: Buffer) => (stdout += data.toString()));
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, options.timeoutMs ?? 40_000);
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, closeSignal) => resolve([code, closeSignal]));
  }).finally(() => clearTimeout(timer));
  running.delete(child);
  return { exitCode, signal, timedOut, stdout, stderr };
}
