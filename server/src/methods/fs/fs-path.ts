/**
 * A PathUri from an fs/* request as a native path, with upstream's split of
 * blame: a URI that does not parse is a params error (-32602: upstream's
 * serde refuses it), one that parses but names no path on this host (a
 * Windows drive, a UNC share) is invalid input (-32600, from to_abs_path).
 */
import { posix } from "node:path";
import { fileUriToPath } from "@execmux/shared/core";
import { invalidParams, invalidRequest } from "../../errors/rpc-error.js";

/** Whether fileUriToPath's reason is a parse error (serde's) rather than a host mismatch. */
function isParseError(uri: string, reason: string): boolean {
  // A NUL is refused while parsing upstream; other "invalid on 'linux'" reasons come from to_abs_path.
  return !reason.startsWith("'") || uri.includes("\u0000") || /%00/i.test(uri);
}

/** Why `uri` is no path on this host, and whether upstream would refuse it while parsing; undefined when it is one. */
export function pathUriError(uri: string): { reason: string; parse: boolean } | undefined {
  const parsed = fileUriToPath(uri);
  return "error" in parsed ? { reason: parsed.error, parse: isParseError(uri, parsed.error) } : undefined;
}

/**
 * The native path `uri` names, normalized as upstream's AbsolutePathBuf is:
 * no empty or `.` segments and no trailing slash, so `file:///tmp/a/` is
 * `/tmp/a` (and messages quoting the path match upstream's).
 */
export function fsPath(uri: string): string {
  const parsed = fileUriToPath(uri);
  if ("error" in parsed) {
    throw isParseError(uri, parsed.error) ? invalidParams(parsed.error) : invalidRequest(parsed.error);
  }
  const normalized = posix.normalize(parsed.path);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}
