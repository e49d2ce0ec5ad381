/**
 * execmux's bounds on a discovery request, on top of upstream's per root
 * (root-discovery.ts): what one request may cost the daemon, whatever roots
 * it names. Upstream has none across roots: 128 roots of 16 MiB each would
 * be a 2 GiB reply, which no client could take.
 */

/** Upstream's: more roots in one request are refused (-32600). */
export const MAX_ROOTS_PER_REQUEST = 128;

/**
 * File contents one request returns, all roots together: its reply (with
 * JSON's escapes) stays well under the 16 MiB frame Codex's client takes.
 * Past it, further files are left out with a warning, as upstream leaves out
 * files past a root's 16 MiB.
 */
export const MAX_DISCOVERY_BYTES_PER_REQUEST = 8 * 1024 * 1024;

/** Walk entries one request examines, all roots together: five roots' worth of upstream's 20,000 each. */
export const MAX_DISCOVERY_ENTRIES_PER_REQUEST = 100_000;

/** A request starts no further root after this long: the rest are answered with an error each. */
export const MAX_DISCOVERY_MS = 30_000;

/** The reply's size for `contentBytes` of file contents: JSON's escapes, and each root's envelope. */
export const replyBytesFor = (contentBytes: number, roots: number) => Math.ceil(contentBytes * 1.2) + roots * 512 + 1024;
