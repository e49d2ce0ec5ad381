/**
 * fs/watchMissing (capability fsWatchMissing): tells the client, once, when
 * a path it found missing appears (or one it found present changes), so it
 * need not poll fs/getMetadata. The watching itself (missing-watch.ts) is
 * loaded on the first call: a daemon whose clients never ask runs none of it.
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidParams } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";
import { fsPath, pathUriError } from "./fs-path.js";

const MISSING_WATCH = Symbol("fs/watchMissing");

export async function fsWatchMissing(params: ParamsOf<"fs/watchMissing">, context: SessionContext): Promise<ResultOf<"fs/watchMissing">> {
  // Every URI is parsed before anything is watched: one that does not parse refuses the call (-32602),
  // one that names no path on this host (a Windows drive) only cannot be watched, as upstream.
  const uris = params.present == null ? params.missing : [...params.missing, params.present];
  const errors = uris.map(pathUriError);
  const parseError = errors.find((error) => error?.parse);
  if (parseError) throw invalidParams(parseError.reason);
  // A path that cannot be on this host is not watched, but the call still replaces the watch before it.
  const unwatchable = errors.some((error) => error !== undefined);
  const missing = unwatchable ? [] : params.missing.map(fsPath);
  const present = unwatchable || params.present == null ? undefined : fsPath(params.present);
  const { ConnectionMissingWatch } = await import("./missing-watch.js");
  const watch = context.resources.get(MISSING_WATCH, () => new ConnectionMissingWatch((watchId) => context.notify("fs/missingChanged", { watchId })));
  const outcome = await watch.replace(params.watchId, missing, present);
  // Changed while it was being set up: told at once, after this reply (it must come first).
  if (outcome === "changed") context.afterReply(() => context.notify("fs/missingChanged", { watchId: params.watchId }));
  return { watching: outcome !== "not watching" };
}
