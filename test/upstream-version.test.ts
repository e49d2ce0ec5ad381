/**
 * execmux reports the upstream release whose protocol it serves as its
 * executorVersion (shared/src/upstream-version.ts): that is the release the
 * suites compare against, so moving the pin moves the claim with it.
 */
import { describe, expect, it } from "vitest";
import { UPSTREAM_PROTOCOL_VERSION } from "@execmux/shared";
// @ts-expect-error: a plain .mjs script without types; only its constant is used.
import { PINNED_UPSTREAM_CODEX_VERSION } from "../scripts/ensure-upstream.mjs";

describe("the protocol version execmux reports", () => {
  it("is the pinned upstream release the differential suites run against", () => {
    expect(UPSTREAM_PROTOCOL_VERSION).toBe(PINNED_UPSTREAM_CODEX_VERSION);
  });
});
