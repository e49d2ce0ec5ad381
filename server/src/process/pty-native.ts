/**
 * node-pty's native binding, used directly for openpty(3) and TIOCSWINSZ.
 * node-pty's own wrapper loses the tail of a PTY burst when the child exits
 * right after it (it destroys the read stream 200 ms after exit, see
 * DESTROY_SOCKET_TIMEOUT_MS in lib/unixTerminal.js), and it forks from the
 * daemon's process; spawn-pty.ts does neither. node-pty is pinned to an
 * exact version because this is not its public API.
 */
import { createRequire } from "node:module";

export interface NativePty {
  /** openpty(3): a master and slave, both non-blocking, and the slave's path. */
  open(cols: number, rows: number): { master: number; slave: number; pty: string };
  resize(fd: number, cols: number, rows: number): void;
}

const require = createRequire(import.meta.url);
const loaded = (require("node-pty/lib/utils.js") as {
  loadNativeModule(name: string): { dir: string; module: NativePty };
}).loadNativeModule("pty");

export const nativePty: NativePty = loaded.module;
