/**
 * node-pty's native binding, used directly. Three things lose the tail of a
 * PTY burst when the child exits right after it: node-pty's wrapper destroys
 * the read stream 200 ms after exit (DESTROY_SOCKET_TIMEOUT_MS in
 * lib/unixTerminal.js); Node discards queued output when a read fails with
 * EIO; and libuv ends the stream on POLLHUP while the kernel still holds
 * output. spawn-pty.ts forks with the same native call and handles all three.
 * node-pty is pinned to an exact version because this is not its public API.
 */
import { createRequire } from "node:module";

export interface NativePty {
  fork(
    file: string,
    args: string[],
    env: string[],
    cwd: string,
    cols: number,
    rows: number,
    uid: number,
    gid: number,
    utf8: boolean,
    helperPath: string,
    onExit: (code: number, signal: number) => void,
  ): { fd: number; pid: number; pty: string };
  resize(fd: number, cols: number, rows: number): void;
}

const require = createRequire(import.meta.url);
const loaded = (require("node-pty/lib/utils.js") as {
  loadNativeModule(name: string): { dir: string; module: NativePty };
}).loadNativeModule("pty");

export const nativePty: NativePty = loaded.module;
/** Only macOS uses the helper; Linux forks in-process. */
export const spawnHelperPath = `${loaded.dir}/spawn-helper`;
