/**
 * node-pty's native binding, used directly. Three things lose the tail of a
 * PTY burst when the child exits right after it: node-pty's wrapper destroys
 * the read stream 200 ms after exit (DESTROY_SOCKET_TIMEOUT_MS in
 * lib/unixTerminal.js); Node discards queued output when a read fails with
 * EIO; and libuv ends the stream on POLLHUP while the kernel still holds
 * output. spawn-pty.ts opens the terminal with the native call (the spawner
 * process forks the child onto it) and handles all three.
 * node-pty is pinned to an exact version because this is not its public API.
 */
import { createRequire } from "node:module";

export interface NativePty {
  /**
   * openpty(3): a new terminal of this size. Both descriptors non-blocking
   * and without close-on-exec; `pty` is the slave's path (/dev/pts/N).
   */
  open(cols: number, rows: number): { master: number; slave: number; pty: string };
  resize(fd: number, cols: number, rows: number): void;
}

const require = createRequire(import.meta.url);
const loaded = (require("node-pty/lib/utils.js") as {
  loadNativeModule(name: string): { dir: string; module: NativePty };
}).loadNativeModule("pty");

export const nativePty: NativePty = loaded.module;