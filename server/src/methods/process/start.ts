import { ErrorCode, type ParamsOf, type ResultOf } from "@execmux/shared";
import { SpawnError, type SpawnSpec } from "../../process/child.js";
import { resolveCwd } from "../../process/cwd.js";
import { buildChildEnv } from "../../process/env-policy.js";
import { GlobBudgetExceeded } from "../../process/glob.js";
import { ManagedProcess } from "../../process/managed-process.js";
import { resolveExecutable } from "../../process/resolve-executable.js";
import { spawnPipe } from "../../process/spawn-pipe.js";
import { spawnPty } from "../../process/spawn-pty.js";
import { osErrorMessage } from "../../os-error.js";
import { internalError, invalidParams, limitExceeded, RpcError } from "../../rpc/rpc-error.js";
import { prepareProcessSandbox } from "../../sandbox/index.js";
import { sandboxAvailability } from "../../sandbox/availability.js";
import type { ProcessContext } from "../context.js";
import { sandboxErrorKind, spawnErrorKind } from "./start-error-kind.js";

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
      const data = { kind: spawnErrorKind(error.errno) };
      if (!os) throw internalError(`failed to start ${program}: ${error.message}`, data);
      throw internalError(error.subject ? `${os}: ${error.subject}` : os, data);
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

/** A sandbox refusal (-32602) gains upstream's data.kind: no sandbox here at all, or not this profile. */
async function withSandboxKind(error: unknown): Promise<never> {
  if (error instanceof RpcError && error.code === ErrorCode.InvalidParams && error.data === undefined) {
    const unavailable = !(await sandboxAvailability()).available;
    throw new RpcError(error.code, error.message, { kind: sandboxErrorKind(unavailable) });
  }
  throw error;
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
    ? await prepareProcessSandbox(params.sandbox, {
        processCwd: cwd,
        hiddenPaths: connection.deps.hiddenPaths,
        enforceManagedNetwork: params.enforceManagedNetwork ?? false,
        managedNetwork: params.managedNetwork != null,
      }).catch(withSandboxKind)
    : undefined;

  session.reserve(params.processId);
  const tree = connection.deps.registry.processTrees.create(session);
  const managed = new ManagedProcess(
    params.processId,
    tty,
    {
      retainedBytes: config.retainedBytes,
      killGraceMs: config.killGraceMs,
      sandboxed: sandbox?.wrap !== undefined,
      maxStdinBufferBytes: config.maxStdinBufferBytes,
      retentionBudget: connection.deps.registry.retentionBudget,
      tree,
    },
    session.onProcessEvent,
  );
  try {
    const resolved = resolveExecutable(program, cwd, env.PATH);
    const arg0 = params.arg0 ?? undefined;
    // Sandboxed, the program is exec'd inside by name, with argv[0] as written (launcher.ts).
    const wrapped = sandbox?.wrap?.(params.argv, arg0);
    const spec: SpawnSpec = {
      ...(wrapped
        ? { file: wrapped.file, args: wrapped.args, arg0: undefined }
        : {
            // A PTY child is exec'd by name (perl's exec searches PATH as execvp
            // does, pty-wrapper.ts), which keeps argv[0] as the client wrote it;
            // everywhere else the path found above is exec'd with argv[0] set explicitly.
            file: tty && arg0 === undefined ? program : resolved,
            args,
            arg0: arg0 ?? (tty ? undefined : program),
          }),
      cwd,
      env,
      pipeStdin: params.pipeStdin ?? false,
      cols: params.cols ?? DEFAULT_COLS,
      rows: params.rows ?? DEFAULT_ROWS,
      cgroup: tree.cgroup,
    };
    const stopTimer = session.metrics.spawnDuration.startTimer({ tty: String(tty) });
    // Both are forked by the spawner process, never by the daemon.
    const spawner = connection.deps.spawner;
    const child = await (tty ? spawnPty(spawner, spec, managed.childEvents) : spawnPipe(spawner, spec, managed.childEvents));
    stopTimer();
    managed.attach(child);
    session.commit(managed, params.argv);
    afterReply(() => managed.announce());
    log.info({ processId: params.processId, argv0: program, tty, pid: child.pid, sandbox: sandbox?.sandboxType ?? "none" }, "process started");
  } catch (error) {
    session.release(params.processId);
    tree.release();
    throw error;
  }
  return { processId: params.processId, sandboxType: sandbox?.sandboxType ?? "none" };
}
