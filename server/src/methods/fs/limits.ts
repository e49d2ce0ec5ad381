/**
 * The fs family's bounds. Upstream's where a client can see them (so a
 * Codex client meets the same refusals), execmux's own where upstream's would
 * not fit a WebSocket message or the daemon's memory.
 */

/**
 * The largest file `fs/readFile` returns whole: 12,000,000 bytes. Upstream
 * allows 512 MiB, but a reply carries the file in base64 (4/3 larger) in one
 * WebSocket message, and Codex's own client (tungstenite's defaults) refuses
 * frames over 16 MiB: 12 MB is 16 MB of base64, with room for the envelope.
 * Larger files are read with fs/open and fs/readBlock.
 */
export const MAX_READ_FILE_BYTES = 12_000_000;

/**
 * Whole-file reads in flight across the daemon, in file bytes: a few
 * clients reading large files at once wait their turn instead of holding
 * several copies each (file, base64, JSON frame) at the same time.
 */
export const WHOLE_FILE_READ_BUDGET_BYTES = 4 * MAX_READ_FILE_BYTES;

/** fs/readBlock's `len`: 1..=1 MiB (upstream's FILE_READ_CHUNK_SIZE). */
export const MAX_READ_BLOCK_BYTES = 1024 * 1024;

/** fs/writeBlock's chunk: 1..=1 MiB decoded (upstream's, asked of 0.171). */
export const MAX_WRITE_BLOCK_BYTES = 1024 * 1024;
/**
 * fs/writeBlock bytes a connection may have waiting to be written: blocks
 * are written one at a time in the order they came; a client that sends
 * faster than the disk takes them is refused (-32011) past this, instead of
 * the daemon holding what it sent. Codex's client awaits each block.
 */
export const MAX_QUEUED_WRITE_BLOCK_BYTES = 8 * MAX_WRITE_BLOCK_BYTES;

/** fs/open: open handles per connection, and the length of a handle id in UTF-8 bytes. */
export const MAX_OPEN_FILE_HANDLES = 128;
export const MAX_FILE_HANDLE_ID_BYTES = 32;

/**
 * fs/readDirectory: entries per reply. Upstream keeps each directory's reply
 * well under its 262,144-value JSON limit (four values per entry).
 */
export const MAX_READ_DIRECTORY_ENTRIES = 50_000;

/** fs/walk: the largest limits a client may ask for, and the reply's size estimate. */
export const MAX_WALK_DEPTH = 64;
export const MAX_WALK_DIRECTORIES = 10_000;
export const MAX_WALK_ENTRIES = 50_000;
export const MAX_WALK_RESPONSE_BYTES = 4 * 1024 * 1024;
/** What the estimate charges per entry or error besides its path (and message). */
export const WALK_RESPONSE_ITEM_OVERHEAD_BYTES = 64;

/** Bytes moved per read/write step when fs/copy copies a file: each step yields to the event loop. */
export const COPY_CHUNK_BYTES = 1024 * 1024;

/**
 * fs/watchMissing: paths one watch may name, and directories it may watch
 * (every directory above them, existing or not, counted once): upstream's,
 * asked of 0.171 (65 paths, or a 65th directory, and it answers
 * `watching: false`). One watch per connection.
 */
export const MAX_WATCH_MISSING_PATHS = 64;
export const MAX_WATCH_MISSING_DIRECTORIES = 64;
/**
 * Directories watched at once across the daemon (each an inotify watch of
 * the daemon's user, whose limit the whole host shares): past it a watch
 * answers `watching: false` and the client polls, as it does with upstream.
 */
export const MAX_WATCHED_DIRECTORIES_PER_DAEMON = 4096;
/** A path longer than the host's PATH_MAX cannot exist: such a watch is refused at once. */
export const MAX_WATCH_PATH_BYTES = 4096;
