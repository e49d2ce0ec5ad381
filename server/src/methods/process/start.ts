import type { ParamsOf, ResultOf } from "@execmux/shared";
import { SpawnFailure } from "../../host/process-host.js";
import { SpawnError } from "../../process/spawn-error.js";
import { resolveCwd } from "../../process/cwd.js";
import { buildChildEnv } from "../../process/env-policy.js";
import { GlobBudgetExceeded } from "../../process/glob.js";
import { ManagedProcess } from "../../process/managed-process.js";
import { resolveExecutable } from "../../process/resolve-executable.js";
import { osErrorMessage } from "../../os-error.js";
import { internalError, invalidParams, limitExceeded } from "../../rpc/rpc-error.js";
import { summarizeArgv } from "../../session/session.js";
import type { ProcessContext } from "../context.js";

/** Upstream's fixed PTY size, used when the client does not give one. */
const DEFAULT_COLS = 80;
const DEFAULT_ROWS = 24;

export async function processStart(
  params: ParamsOf<"process/start">,
  { session, connection, afterReply }: ProcessContext,
): Promise<ResultOf<"process/start">> {
  const [program, ...args] = params.argv;
  if (program === undefined) throw invalidParams("argv must not be empty");
  if (program === "") throw invalidParams("argv[0] must not be empty");
  refuseWhatCannotBeHonoured(params);
  try {
    return await start(params, program, args, { session, connection, afterReply });
  } catch (error) {
    // Upstream's words for a failed spawn: the OS error (and, for a missing
    // working directory, which one: upstream's message is the same as for a
    // missing program, and a client cannot tell them apart).
    if (error instanceof SpawnError) {
      const os = osErrorMessage(error.errno);
      if (!os) throw internalError(`failed to start ${program}: ${error.message}`);
      throw internalError(error.subject ? `${os}: ${error.subject}` : os);
    }
    if (error instanceof GlobBudgetExceeded) throw limitExceeded("envPolicyGlobSteps", error.message);
    throw error;
  }
}

/**
 * Requests for machinery execmux does not provide are refused, never run
 * weaker than asked. Only clients that ignore capabilities execmux reports
 * false send them. (A `sandbox` is enforced, or refused, by sandbox/.)
 */
function refuseWhatCannotBeHonoured(params: ParamsOf<"process/start">): void {
  if (params.networkProxy) throw invalidParams("network proxy launch is not supported on this executor");
  if (params.shellSnapshot) throw invalidParams("shell snapshots are unsupported on this executor");
}

async function start(
  params: ParamsOf<"process/start">,
  program: string,
  args: string[],
  { session, connection, afterReply }: Pick<ProcessContext, "session" | "connection" | "afterReply">,
): Promise<ResultOf<"process/start">> {
  const { config, log } = connection.deps;
  const tty = params.tty ?? false;
  const cwd = resolveCwd(params.cwd);
  const env = buildChildEnv(params.env, params.envPolicy, process.env, cwd);
  const argvEnvBytes = [...params.argv, ...Object.keys(env), ...Object.values(env)].reduce((sum, text) => sum + Buffer.byteLength(text) + 1, 0);
  if (argvEnvBytes > config.maxArgvEnvBytes) {
    throw limitExceeded("maxArgvEnvBytes", `argv and environment take ${argvEnvBytes} bytes, over the limit of ${config.maxArgvEnvBytes}`);
  }

  const sandbox = params.sandbox
    ? // Loaded on the first sandboxed start: a daemon asked for none never loads it.
      await (await import("../../sandbox/index.js")).prepareProcessSandbox(params.sandbox, {
        processCwd: cwd,
        hiddenPaths: connection.deps.hiddenPaths,
        enforceManagedNetwork: params.enforceManagedNetwork ?? false,
        managedNetwork: params.managedNetwork != null,
      })
    : undefined;

  session.reserve(params.processId);
  const host = connection.deps.host;
  const managed = new ManagedProcess(
    params.processId,
    tty,
    { host, sandboxed: sandbox?.wrap !== undefined, maxStdinBufferBytes: config.maxStdinBufferBytes },
    session.onProcessEvent,
  );
  try {
    const resolved = resolveExecutable(program, cwd, env.PATH);
    const arg0 = params.arg0 ?? program;
    // Sandboxed, the program is exec'd inside by name, with argv[0] as written (launcher.ts).
    const wrapped = sandbox?.wrap?.(params.argv, params.arg0 ?? undefined);
    const origin = summarizeArgv(params.argv, Date.now());
    const stopTimer = session.metrics.spawnDuration.startTimer(tty ? "true" : "false");
    const started = await host.start({
      sessionId: session.id,
      processId: params.processId,
      file: wrapped ? wrapped.file : resolved,
      argv: wrapped ? [wrapped.file, ...wrapped.args] : [arg0, ...args],
      env,
      cwd,
      tty,
      pipeStdin: params.pipeStdin ?? false,
      cols: params.cols ?? DEFAULT_COLS,
      rows: params.rows ?? DEFAULT_ROWS,
      sandboxed: wrapped !== undefined,
      networkSandbox: wrapped !== undefined && !sandbox!.policy.isolateNetwork,
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
