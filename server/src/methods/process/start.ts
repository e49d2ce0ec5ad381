import { join } from "node:path";
import { ErrorCode } from "@execmux/shared/core";
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { SpawnFailure } from "../../host/process-host.js";
import { SpawnError } from "../../process/spawn-error.js";
import { resolveCwd } from "../../process/cwd.js";
import { buildChildEnv } from "../../process/env-policy.js";
import { GlobBudgetExceeded } from "../../process/glob.js";
import { ManagedProcess } from "../../process/managed-process.js";
import { resolveExecutable } from "../../process/resolve-executable.js";
import { osErrorMessage } from "../../os-error.js";
import { internalError, invalidParams, limitExceeded, RpcError } from "../../errors/rpc-error.js";
import { summarizeArgv } from "../../session/session.js";
import type { CredentialBroker } from "../../network-proxy/credential-broker.js";
import type { Decider } from "../../network-proxy/gate.js";
import { MaskingBudgetExceeded } from "../../network-proxy/masking-budget.js";
import type { NetworkProxyLaunch } from "../../network-proxy/launch.js";
import type { NetworkPolicy } from "../../network-proxy/policy.js";
import type { SnapshotPlan } from "../../shell-snapshot/index.js";
import type { ProcessContext } from "../context.js";
import { sandboxErrorKind, spawnErrorKind } from "./start-error-kind.js";

/** Upstream's fixed PTY size, used when the client does not give one. */
const DEFAULT_COLS = 80;
const DEFAULT_ROWS = 24;

export async function processStart(
  params: ParamsOf<"process/start">,
  { session, connection, afterReply }: ProcessContext,
): Promise<ResultOf<"process/start">> {
  // Upstream checks the network fields before anything else (argv included). Loaded only when asked for.
  const networkPolicy =
    params.networkProxy || params.managedNetwork?.transparentTcp !== undefined
      ? (await import("../../network-proxy/launch-params.js")).checkNetworkParams(params)
      : undefined;
  const [program] = params.argv;
  if (program === undefined) throw invalidParams("argv must not be empty");
  if (program === "") throw invalidParams("argv[0] must not be empty");
  // Checked before anything is started, as upstream checks it before the cwd or the process id. Loaded only when asked for.
  const snapshot = params.shellSnapshot ? (await import("../../shell-snapshot/index.js")).planShellSnapshot(params) : undefined;
  try {
    return await start(params, program, { session, connection, afterReply }, networkPolicy, snapshot);
  } catch (error) {
    // Upstream's words for a failed spawn: the OS error (and, for a missing
    // working directory, which one: upstream's message is the same as for a
    // missing program, and a client cannot tell them apart).
    if (error instanceof SpawnError) {
      const os = osErrorMessage(error.errno);
      const data = { kind: spawnErrorKind(error.errno) };
      if (!os) throw internalError(`failed to start ${program}: ${error.message}`, data);
      throw internalError(error.subject ? `${os}: ${error.subject}` : os, data);
    }
    if (error instanceof GlobBudgetExceeded) throw limitExceeded("envPolicyGlobSteps", error.message);
    throw error;
  }
}

/** A sandbox refusal (-32602) gains upstream's data.kind: no sandbox here at all, or not this profile. */
async function withSandboxKind(error: unknown): Promise<never> {
  if (error instanceof RpcError && error.code === ErrorCode.InvalidParams && error.data === undefined) {
    const { sandboxAvailability } = await import("../../sandbox/availability.js");
    const unavailable = !(await sandboxAvailability()).available;
    throw new RpcError(error.code, error.message, { kind: sandboxErrorKind(unavailable) });
  }
  throw error;
}

async function start(
  params: ParamsOf<"process/start">,
  program: string,
  { session, connection, afterReply }: Pick<ProcessContext, "session" | "connection" | "afterReply">,
  networkPolicy: NetworkPolicy | undefined,
  snapshot: SnapshotPlan | undefined,
): Promise<ResultOf<"process/start">> {
  const { config } = connection.deps;
  const tty = params.tty ?? false;
  const cwd = resolveCwd(params.cwd);
  const env = buildChildEnv(params.env, params.envPolicy, process.env, cwd);
  const masking = params.networkProxy?.proxy.credentialMasking === true;
  // Masking searches the environment: held to the size a process may be given first.
  if (masking) checkArgvEnvBytes(params.argv, env, config.maxArgvEnvBytes);
  // Loaded only when masking is asked for; the real values stay with the broker, in this daemon.
  const broker = masking ? await maskCredentials(params, env) : undefined;
  const proxy = networkPolicy && params.networkProxy ? await startNetworkProxy(params, networkPolicy, session, config, connection.daemonPort, masking ? { broker } : undefined) : undefined;
  try {
    if (proxy) {
      for (const [key, value] of Object.entries(proxy.defaults)) if (!env[key]) env[key] = value;
      Object.assign(env, proxy.env);
    }
    return await startWithin(params, program, { session, connection, afterReply }, { cwd, env, tty, proxy, snapshot });
  } catch (error) {
    proxy?.close();
    throw error;
  }
}

/** Argv and environment within --max-argv-env-bytes (each string with its terminating NUL), or LimitExceeded. */
function checkArgvEnvBytes(argv: readonly string[], env: Readonly<Record<string, string>>, limit: number): void {
  const bytes = [...argv, ...Object.keys(env), ...Object.values(env)].reduce((sum, text) => sum + Buffer.byteLength(text) + 1, 0);
  if (bytes > limit) throw limitExceeded("maxArgvEnvBytes", `argv and environment take ${bytes} bytes, over the limit of ${limit}`);
}

/**
 * Placeholders for the credentials in `env`, when upstream would mask for this argv (credential-broker.ts).
 * Custom providers are compiled first, whatever the argv: one that cannot be honoured refuses the start.
 */
async function maskCredentials(params: ParamsOf<"process/start">, env: Record<string, string>) {
  const { CredentialBroker, masksFor } = await import("../../network-proxy/credential-broker.js");
  try {
    const providers = await customProviders(params);
    return masksFor(params.argv) ? CredentialBroker.virtualize(env, providers) : undefined;
  } catch (error) {
    if (error instanceof MaskingBudgetExceeded) throw limitExceeded("credentialMasking", error.message);
    throw error;
  }
}

async function customProviders(params: ParamsOf<"process/start">) {
  const configs = params.networkProxy?.proxy.credentialProviders ?? {};
  if (Object.keys(configs).length === 0) return [];
  const { compileProviders } = await import("../../network-proxy/custom-providers.js");
  try {
    return compileProviders(configs);
  } catch (error) {
    if (error instanceof MaskingBudgetExceeded) throw error;
    // Upstream logs such a provider and starts the process with its credential unmasked; a masking request is refused instead.
    throw invalidParams((error as Error).message);
  }
}

/** The sandbox is on unless there is none or it is `disabled`; then the proxy is bridged into it. */
function confines(params: ParamsOf<"process/start">): boolean {
  return params.sandbox != null && params.sandbox.permissions.type !== "disabled";
}

async function startNetworkProxy(
  params: ParamsOf<"process/start">,
  policy: NetworkPolicy,
  session: ProcessContext["session"],
  config: ProcessContext["connection"]["deps"]["config"],
  daemonPort: number | undefined,
  masking: { broker: CredentialBroker | undefined } | undefined,
): Promise<NetworkProxyLaunch> {
  const [{ launchNetworkProxy }, { stateDirectory }] = await Promise.all([import("../../network-proxy/launch.js"), import("../../host/state-directory.js")]);
  const daemonPorts = new Set(daemonPort === undefined ? [] : [daemonPort]);
  const launch = params.networkProxy!;
  const { processId } = params;
  return launchNetworkProxy({
    policy,
    enableSocks5: launch.proxy.enableSocks5,
    allowLocalBinding: launch.proxy.allowLocalBinding,
    // checkNetworkParams let it through only with a managed sandbox, which confines().
    transparentTcp: launch.proxy.transparentTcp === true,
    // The state directory is hidden from every sandbox (sandbox/hidden-paths.ts).
    socketParent: confines(params) ? join(stateDirectory(config.stateDirectory), "network-proxy") : undefined,
    protectedPorts: () => daemonPorts,
    masking: masking && { broker: masking.broker, bundleParent: join(stateDirectory(config.stateDirectory), "network-proxy-ca") },
    decider: launch.policyDecisionTimeoutMs == null ? undefined : domainReview(session, processId, launch.policyDecisionTimeoutMs),
    report: (record) =>
      session.notifyClient("network/policyDecision", {
        processId,
        timestamp: new Date().toISOString(),
        ...record,
      }),
  });
}

/**
 * How much longer than policyDecisionTimeoutMs upstream waits for the client's
 * answer before it denies: measured against 0.171 (300, 2000 and 9000 ms
 * timeouts were denied after about 5.3, 7 and 14 s).
 */
const DECISION_GRACE_MS = 5_000;

/**
 * Domain review: a host the policy leaves open is put to the client as
 * upstream puts it (network/policyRequest), and its answer decides. No answer
 * in time, or one that is not `{decision: {type, reason?}}`, denies.
 */
function domainReview(session: ProcessContext["session"], processId: string, timeoutMs: number): Decider {
  return async ({ protocol, host, port }) => {
    const waitMs = timeoutMs + DECISION_GRACE_MS;
    const answer = (await session.requestClient("network/policyRequest", { processId, request: { protocol, host, port } }, waitMs)) as {
      decision?: { type?: unknown; reason?: unknown };
    } | null;
    const type = answer?.decision?.type;
    if (type !== "allow" && type !== "deny" && type !== "ask") throw new Error("not a policy decision");
    const reason = answer?.decision?.reason;
    return { decision: type, ...(typeof reason === "string" ? { reason } : {}) };
  };
}

async function startWithin(
  params: ParamsOf<"process/start">,
  program: string,
  { session, connection, afterReply }: Pick<ProcessContext, "session" | "connection" | "afterReply">,
  {
    cwd,
    env,
    tty,
    proxy,
    snapshot,
  }: { cwd: string; env: Record<string, string>; tty: boolean; proxy: NetworkProxyLaunch | undefined; snapshot: SnapshotPlan | undefined },
): Promise<ResultOf<"process/start">> {
  const { config, log } = connection.deps;
  checkArgvEnvBytes(params.argv, env, config.maxArgvEnvBytes);

  const sandbox = params.sandbox
    ? // Loaded on the first sandboxed start: a daemon asked for none never loads it.
      await (await import("../../sandbox/index.js")).prepareProcessSandbox(params.sandbox, {
        processCwd: cwd,
        hiddenPaths: connection.deps.hiddenPaths,
        enforceManagedNetwork: params.enforceManagedNetwork ?? false,
        // An executor-local proxy takes the place of the client's.
        managedNetwork: params.managedNetwork != null && !proxy,
        proxyBridge: proxy?.bridge,
      }).catch(withSandboxKind)
    : undefined;

  session.reserve(params.processId);
  const sandboxed = sandbox?.wrap !== undefined;
  const networkSandbox = sandboxed && !sandbox!.policy.isolateNetwork;
  // How an argv of this start is exec'd: sandboxed, the program is exec'd
  // inside by name with argv[0] as written (launcher.ts); else the program
  // found on PATH, with the client's arg0 as argv[0].
  // The program is looked up on the request's PATH, not on one a snapshot restores.
  const searchPath = env.PATH;
  const launchOf = (argv: readonly string[]) => {
    const wrapped = sandbox?.wrap?.(argv, params.arg0 ?? undefined);
    if (wrapped) return { file: wrapped.file, argv: [wrapped.file, ...wrapped.args] };
    return { file: resolveExecutable(argv[0]!, cwd, searchPath), argv: [params.arg0 ?? argv[0]!, ...argv.slice(1)] };
  };
  let argv: readonly string[] = params.argv;
  if (snapshot) {
    try {
      // The capture runs as this start would (launchOf, the same cwd, environment, sandbox), in the session's host.
      const replayed = await (await import("../../shell-snapshot/index.js")).applyShellSnapshot(snapshot, {
        registry: connection.deps.registry,
        host: connection.deps.host,
        log: connection.deps.log,
        owner: session,
        argv,
        cwd,
        env,
        params,
        launch: (captureArgv) => ({ ...launchOf(captureArgv), sandboxed, networkSandbox }),
      });
      if (replayed) ({ argv, env } = replayed);
    } catch (error) {
      session.release(params.processId);
      throw error;
    }
  }
  // The proxy lives as long as the process has output open (a background child may still use it).
  const onEvent: typeof session.onProcessEvent = proxy
    ? (process, event) => {
        if (event.kind === "closed") proxy.close();
        session.onProcessEvent(process, event);
      }
    : session.onProcessEvent;
  const host = connection.deps.host;
  const managed = new ManagedProcess(
    params.processId,
    tty,
    { host, sandboxed, maxStdinBufferBytes: config.maxStdinBufferBytes },
    onEvent,
  );
  try {
    const launch = launchOf(argv);
    const origin = summarizeArgv(params.argv, Date.now());
    const stopTimer = session.metrics.spawnDuration.startTimer(tty ? "true" : "false");
    const started = await host.start({
      sessionId: session.id,
      processId: params.processId,
      file: launch.file,
      argv: launch.argv,
      env,
      cwd,
      tty,
      pipeStdin: params.pipeStdin ?? false,
      cols: params.cols ?? DEFAULT_COLS,
      rows: params.rows ?? DEFAULT_ROWS,
      sandboxed,
      networkSandbox,
      // Kept by the host for listings after a daemon restart.
      meta: Buffer.from(JSON.stringify(origin)),
    }, managed.hostEvents);
    stopTimer();
    managed.attach(started.handle, started.pid, started.startEpochMs);
    session.commit(managed, origin);
    afterReply(() => managed.announce());
    log.info({ processId: params.processId, argv0: program, tty, pid: started.pid, sandbox: sandbox?.sandboxType ?? "none" }, "process started");
  } catch (error) {
    session.release(params.processId);
    if (error instanceof SpawnFailure) throw new SpawnError(error.message, error.errno, error.stage === "cwd" ? `working directory ${cwd}` : undefined);
    throw error;
  }
  return { processId: params.processId, sandboxType: sandbox?.sandboxType ?? "none" };
}
