/** fs/writeFile: create or truncate a file and write the decoded bytes. */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidRequest } from "../../rpc/rpc-error.js";
import { decodeStandardBase64 } from "./base64.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { openForWriteNoFollow } from "./no-follow.js";
import { checkFsSandbox } from "./sandbox-gate.js";

const { O_CREAT, O_NONBLOCK, O_TRUNC, O_WRONLY } = constants;

export async function fsWriteFile(params: ParamsOf<"fs/writeFile">): Promise<ResultOf<"fs/writeFile">> {
  const path = fsPath(params.path);
  const decoded = decodeStandardBase64(params.dataBase64);
  if ("error" in decoded) throw invalidRequest(`fs/writeFile requires valid base64 dataBase64: ${decoded.error}`);
  checkFsSandbox(params.sandbox, "write");
  await mappingFsErrors(async () => {
    // Non-blocking: writing to a FIFO nobody reads fails (ENXIO) instead of
    // holding the call, and a threadpool thread, until someone does.
    const file: FileHandle =
      params.followSymlinks === false
        ? await openForWriteNoFollow(path)
        : await open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0o666);
    try {
      await file.writeFile(decoded.bytes);
    } finally {
      await file.close();
    }
  });
  return {};
}
