/**
 * The upstream `codex exec-server` release whose protocol execmux serves,
 * reported as `environment/info`'s `executorVersion`: Codex agents gate
 * features on it (the 0.171 agent asks `capabilities/discoverV2` only of an
 * executor at 0.164.0 or later), so it says which protocol a client may
 * speak, as upstream's own version does. The pinned release the suites
 * compare against (scripts/ensure-upstream.mjs): a test keeps the two equal.
 * execmux's own version is `execmux --version`.
 */
export const UPSTREAM_PROTOCOL_VERSION = "0.171.0";
