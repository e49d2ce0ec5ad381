/** process/start's error.data.kind (upstream 0.171), from the errno of a failed spawn. */
import { describe, expect, it } from "vitest";
import { sandboxErrorKind, spawnErrorKind } from "../server/src/methods/process/start-error-kind.js";

describe("spawnErrorKind", () => {
  it.each([
    // A missing program, a PATH lookup that found nothing, a missing working directory.
    ["ENOENT", "spawnNotFound"],
    // Not executable, a directory as the program (execve says EACCES for both), or EPERM.
    ["EACCES", "spawnPermissionDenied"],
    ["EPERM", "spawnPermissionDenied"],
    // A bad executable, a working directory (or a path component) that is a file.
    ["ENOEXEC", "spawnFailed"],
    ["ENOTDIR", "spawnFailed"],
    ["E2BIG", "spawnFailed"],
    ["ELOOP", "spawnFailed"],
    // A code that names no OS error kind.
    ["EWHATEVER", "spawnFailed"],
  ])("%s is %s", (errno, kind) => {
    expect(spawnErrorKind(errno)).toBe(kind);
  });
});

describe("sandboxErrorKind", () => {
  it("tells a host without a sandbox from a profile that could not be prepared", () => {
    expect(sandboxErrorKind(true)).toBe("sandboxUnavailable");
    expect(sandboxErrorKind(false)).toBe("sandboxPreparation");
  });
});
