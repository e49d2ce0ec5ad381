/**
 * process/start's `shellSnapshot` (shellSnapshotV2): a `[shell, "-lc",
 * script]` start whose login shell has been captured once (capture.ts, per
 * scope, cwd, environment policy and sandbox, cache.ts) runs from that
 * capture instead of reading its profile again (replay.ts). What upstream
 * refuses is refused in its words; a start whose argv is not that form, or
 * whose capture failed, runs as it came. process/start loads this module
 * only when a start asks for a snapshot.
 */
import { createHash } from "node:crypto";
import type { StartParams } from "@execmux/shared";
import type { ProcessHost } from "../host/process-host.js";
import type { Logger } from "../logger.js";
import type { Session } from "../session/session.js";
import type { SessionRegistry } from "../session/session-registry.js";
import { internalError, invalidParams } from "../errors/rpc-error.js";
import { SnapshotCache } from "./cache.js";
import { runCapture, type CaptureLaunch } from "./capture.js";
import { parseCapture } from "./parse.js";
import { replay, type Replay } from "./replay.js";
import { captureScript, type SnapshotShell } from "./scripts.js";

const MAX_SCOPE_BYTES = 256;
const SHELLS: readonly string[] = ["bash", "zsh", "sh"] satisfies readonly SnapshotShell[];

export interface SnapshotPlan {
  readonly shell: SnapshotShell;
  /** What the snapshot is shared by: the request, the cwd, the policy and the sandbox, hashed. */
  readonly key: string;
}

/**
 * Upstream's checks, in its order: the scope's size (always), then whether
 * the argv is the snapshot shell's `-lc` form (if not, no snapshot and no
 * error), then the shell's name.
 */
export function planShellSnapshot(params: StartParams): SnapshotPlan | undefined {
  const request = params.shellSnapshot;
  if (!request) return undefined;
  const scopeBytes = Buffer.byteLength(request.scopeId);
  if (scopeBytes === 0 || scopeBytes > MAX_SCOPE_BYTES) {
    throw invalidParams(`shell snapshot scope must be non-empty and at most ${MAX_SCOPE_BYTES} bytes`);
  }
  const [program, flag] = params.argv;
  if (params.argv.length < 3 || program !== request.shell.path || flag !== "-lc") return undefined;
  if (!SHELLS.includes(request.shell.name)) throw invalidParams(`shell snapshots are unsupported for shell \`${request.shell.name}\``);
  const key = canonical({ request, cwd: params.cwd, envPolicy: params.envPolicy, sandbox: params.sandbox });
  return { shell: request.shell.name as SnapshotShell, key: createHash("sha256").update(key).digest("hex") };
}

/** JSON with members sorted and absent ones (null, as serde reads them) left out: equal requests, equal keys. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_name, node: unknown) => {
    if (!node || typeof node !== "object" || Array.isArray(node)) return node;
    const members = Object.entries(node as Record<string, unknown>).filter(([, member]) => member !== null && member !== undefined);
    return Object.fromEntries(members.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

/** One cache per daemon (per session registry: a test process may run several daemons). */
const caches = new WeakMap<SessionRegistry, SnapshotCache>();

export interface SnapshotStart {
  /** The daemon's sessions, for its cache. */
  readonly registry: SessionRegistry;
  /** Where the capture runs, as every process of the daemon does. */
  readonly host: ProcessHost;
  /** The session whose snapshots these are (and in whose tree in the host the capture runs). */
  readonly owner: Session;
  readonly log: Logger;
  readonly argv: readonly string[];
  /** The process's cwd (native) and environment as built without a snapshot. */
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly params: StartParams;
  /** How `argv` would be started for this start (the sandbox's wrapping and flags, the program's path, argv[0]). */
  launch(argv: readonly string[]): Omit<CaptureLaunch, "cwd" | "env">;
}

/** The argv and environment to start with: from the snapshot, or undefined to run as the client asked. */
export async function applyShellSnapshot(plan: SnapshotPlan, start: SnapshotStart): Promise<Replay | undefined> {
  const { registry, owner } = start;
  const isLive = (session: object) => registry.findVisible((session as Session).id, { client: (session as Session).client, observesAll: false }) === session;
  let cache = caches.get(registry);
  if (!cache) caches.set(registry, (cache = new SnapshotCache(isLive)));
  const snapshot = await cache.get(owner, owner.client, plan.key, async () => {
    let launch: Omit<CaptureLaunch, "cwd" | "env">;
    try {
      launch = start.launch([start.argv[0]!, "-lc", captureScript(plan.shell)]);
    } catch (error) {
      start.log.info({ shell: plan.shell, reason: (error as Error).message }, "shell snapshot not captured");
      return undefined;
    }
    const outcome = await runCapture({ ...launch, cwd: start.cwd, env: start.env }, { host: start.host, sessionId: owner.id });
    const parsed = "output" in outcome ? parseCapture(outcome.output, start.params.envPolicy, start.cwd) : outcome;
    if ("failure" in parsed) {
      start.log.info({ shell: plan.shell, reason: parsed.failure }, "shell snapshot not captured");
      return undefined;
    }
    return parsed.snapshot;
  });
  // The session may have ended while its capture ran (or waited its turn): its
  // processes are gone from the host, and this start must not bring it back there.
  if (!isLive(owner)) throw internalError("the session ended while its shell snapshot was being captured");
  return snapshot && replay(plan.shell, snapshot, start.argv, start.env, start.params.env);
}
