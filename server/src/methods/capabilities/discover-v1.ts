/**
 * capabilityRoots/discoverV1 (capability capabilityDiscoverySandbox): the
 * plugin manifests, MCP and app configs, skills and their metadata under
 * each root the client names, read whole in one request
 * (root-discovery.ts). A root's `sandbox` confines its discovery as it
 * confines an fs/* call: under a profile that does not read the whole disk
 * it runs inside the sandbox, so what the profile denies is reported as
 * upstream's sandbox reports it, never read. Roots that share a profile are
 * discovered by one confined helper.
 *
 * A request costs the daemon a bounded amount whatever it names: at most
 * 128 roots (upstream's), upstream's bounds per root, and execmux's across
 * roots (limits.ts); its reply takes its turn on the connection and room in
 * the connection's reply budget, its file contents room in the daemon's
 * budget for whole-file reads, and it holds one of the client's
 * descriptors while it runs.
 */
import { pathToFileURL } from "node:url";
import type { CapabilityRootDiscovery, ParamsOf, ResultOf, WireFileSystemSandboxContext } from "@execmux/shared";
import { inPackage } from "../../package-root.js";
import { connectionClosed, invalidParams, invalidRequest } from "../../errors/rpc-error.js";
import { runConfined, type PreparedFsSandbox } from "../../sandbox/index.js";
import type { SessionContext } from "../context.js";
import { fsPath, pathUriError } from "../fs/fs-path.js";
import { wholeFileReads } from "../fs/read-budget.js";
import { withReplyLane } from "../fs/reply-lane.js";
import { fsConfinement } from "../fs/sandbox-gate.js";
import {
  MAX_DISCOVERY_BYTES_PER_REQUEST,
  MAX_DISCOVERY_ENTRIES_PER_REQUEST,
  MAX_DISCOVERY_MS,
  MAX_ROOTS_PER_REQUEST,
  replyBytesFor,
} from "./limits.js";
import type { RequestLimits, RootToDiscover, RootsOutcome } from "./root-discovery.js";

// The confined helper imports it from dist/ (tsc's output), where it is whether or not the daemon runs from its bundle.
const ROOT_DISCOVERY_MODULE = pathToFileURL(inPackage("dist", "methods", "capabilities", "root-discovery.js")).href;

/** Consecutive roots under the same profile: discovered together. */
interface Run {
  readonly roots: RootToDiscover[];
  readonly sandbox: WireFileSystemSandboxContext | undefined;
  readonly confinement: PreparedFsSandbox | undefined;
}

/**
 * The root's path as upstream decodes it: a URI that does not parse fails
 * the request, one of another host only its root. It is echoed (and quoted)
 * as upstream's URL parser writes it: dot segments resolved, a trailing
 * slash kept.
 */
function rootToDiscover(root: ParamsOf<"capabilityRoots/discoverV1">["roots"][number]): RootToDiscover {
  const error = pathUriError(root.path);
  if (error?.parse) throw invalidParams(error.reason);
  const uri = URL.canParse(root.path) ? new URL(root.path).href : root.path;
  return { id: root.id, uri, path: error ? { invalid: error.reason } : fsPath(root.path) };
}

async function runsOf(params: ParamsOf<"capabilityRoots/discoverV1">, roots: readonly RootToDiscover[], context: SessionContext): Promise<Run[]> {
  const runs: Run[] = [];
  let previousKey: string | undefined;
  for (const [index, root] of roots.entries()) {
    const sandbox = params.roots[index]!.sandbox ?? undefined;
    const key = JSON.stringify(sandbox ?? null);
    if (runs.length > 0 && key === previousKey) {
      runs.at(-1)!.roots.push(root);
      continue;
    }
    // Every profile is checked (and its sandbox prepared) before any root is discovered: a bad one fails the request.
    runs.push({ roots: [root], sandbox, confinement: await fsConfinement(sandbox, "read", context) });
    previousKey = key;
  }
  return runs;
}

export async function discoverCapabilityRoots(
  params: ParamsOf<"capabilityRoots/discoverV1">,
  context: SessionContext,
): Promise<ResultOf<"capabilityRoots/discoverV1">> {
  // Decoded first (a URI that does not parse), then counted, as upstream.
  const roots = params.roots.map(rootToDiscover);
  if (roots.length > MAX_ROOTS_PER_REQUEST) throw invalidRequest(`capability root discovery accepts at most ${MAX_ROOTS_PER_REQUEST} roots`);
  const runs = await runsOf(params, roots, context);
  return withDiscoveryBudget(context, params.roots.length, async () => ({ roots: await discoverRuns(runs, context) }));
}

/**
 * What every discovery request holds while it runs: one of the client's
 * descriptors, its turn on the connection and room in the connection's reply
 * budget, and room in the daemon's budget for whole-file reads.
 */
export async function withDiscoveryBudget<T>(context: SessionContext, roots: number, discover: () => Promise<T>): Promise<T> {
  const { connection } = context;
  const releaseDescriptor = connection.deps.budgets.descriptors.take(connection.client, "capability discovery");
  try {
    return await withReplyLane(context, async () => {
      const replyBytes = replyBytesFor(MAX_DISCOVERY_BYTES_PER_REQUEST, roots);
      await context.whenReplyRoom(replyBytes);
      if (context.signal.aborted) throw connectionClosed();
      context.reserveReply(replyBytes);
      const releaseBytes = await wholeFileReads.reserve(MAX_DISCOVERY_BYTES_PER_REQUEST, context.signal);
      try {
        return await discover();
      } finally {
        setImmediate(releaseBytes);
      }
    });
  } finally {
    releaseDescriptor();
  }
}

async function discoverRuns(runs: readonly Run[], context: SessionContext): Promise<CapabilityRootDiscovery[]> {
  const deadline = Date.now() + MAX_DISCOVERY_MS;
  let bytes = MAX_DISCOVERY_BYTES_PER_REQUEST;
  let entries = MAX_DISCOVERY_ENTRIES_PER_REQUEST;
  const discovered: CapabilityRootDiscovery[] = [];
  for (const run of runs) {
    const limits: RequestLimits = { maxBytes: bytes, maxEntries: entries, deadline };
    const outcome = await discoverRun(run, limits, context);
    discovered.push(...outcome.roots);
    bytes -= outcome.bytes;
    entries -= outcome.entries;
  }
  return discovered;
}

async function discoverRun(run: Run, limits: RequestLimits, context: SessionContext): Promise<RootsOutcome> {
  try {
    if (run.confinement) {
      const call = { module: ROOT_DISCOVERY_MODULE, exportName: "discoverRoots", args: [run.roots, limits] };
      return (await runConfined(run.confinement, call, context.signal)) as RootsOutcome;
    }
    const { discoverRoots } = await import("./root-discovery.js");
    // In the daemon under a profile (one that reads the whole disk): the daemon's own files stay out of reach.
    const hiddenPaths = run.sandbox ? context.connection.deps.hiddenPaths : undefined;
    return await discoverRoots(run.roots, { ...limits, ...(hiddenPaths ? { hiddenPaths } : {}) }, context.signal);
  } catch (error) {
    if (context.signal.aborted) throw connectionClosed();
    // The helper failed as a whole (it could not start, or died): each of its roots says so.
    const reason = error instanceof Error ? error.message : String(error);
    const roots = run.roots.map((root) => ({
      id: root.id,
      path: root.uri,
      plugin: null,
      skills: [],
      namespaceManifests: [],
      warnings: [],
      error: `failed to scan capability root ${root.uri}: ${reason}`,
    }));
    return { roots, bytes: 0, entries: 0 };
  }
}
