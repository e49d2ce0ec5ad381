/** fs/getMetadata: what the path is (`isSymlink` for the path itself, the rest for its target). */
import type { Stats } from "node:fs";
import type { FsGetMetadataResult, ParamsOf, ResultOf } from "@execmux/shared";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { metadataNoFollow } from "./no-follow.js";
import { pathMetadata } from "./path-metadata.js";
import { checkDirectRead } from "./sandbox-gate.js";

/** Whole Unix milliseconds, 0 when unknown or before 1970, as upstream reports times. */
const unixMs = (ms: number) => (Number.isFinite(ms) && ms > 0 ? Math.floor(ms) : 0);

function describe(stats: Stats, isSymlink: boolean): FsGetMetadataResult {
  return {
    isDirectory: stats.isDirectory(),
    isFile: stats.isFile(),
    isSymlink,
    size: stats.size,
    createdAtMs: unixMs(stats.birthtimeMs),
    modifiedAtMs: unixMs(stats.mtimeMs),
  };
}

export async function fsGetMetadata(params: ParamsOf<"fs/getMetadata">): Promise<ResultOf<"fs/getMetadata">> {
  const path = fsPath(params.path);
  checkDirectRead(params.sandbox);
  return mappingFsErrors(async () => {
    if (params.followSymlinks === false) return describe(await metadataNoFollow(path), false);
    const { stats, isSymlink } = await pathMetadata(path);
    return describe(stats, isSymlink);
  });
}
