/**
 * Real pipes, made from FIFOs: Node has no pipe(2), but it can open a FIFO,
 * and one `mkfifo` makes a batch of them. Each FIFO carries exactly one pipe:
 * the helper opens both ends, the child gets one, the daemon opens the other
 * by path, and the name is unlinked once the daemon has it.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, constants, lstatSync, mkdirSync, openSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** FIFOs made per `mkfifo`, and how few may be left before the next batch is made. */
const BATCH = 128;
const LOW_WATER = 32;

export class FifoPool {
  private readonly ready: string[] = [];
  private refilling: Promise<void> | undefined;
  private made = 0;
  /**
   * Names this pool's FIFOs apart from those of the spawner before it, which
   * a SIGKILL left behind: a pid does not, as every spawner in a PID
   * namespace of its own is pid 2.
   */
  private readonly prefix = `fifo-${randomBytes(6).toString("hex")}`;

  constructor(private readonly directory: string) {}

  /** A fresh FIFO's path; fails when none can be made (no `mkfifo`, no room). */
  async take(): Promise<string> {
    if (this.ready.length < LOW_WATER) void this.refill().catch(() => undefined);
    while (this.ready.length === 0) await this.refill();
    return this.ready.shift()!;
  }

  /** Unlinks every FIFO not handed out (this helper is exiting). */
  discard(): void {
    for (const path of this.ready.splice(0)) rmSync(path, { force: true });
  }

  /**
   * The directory vanished (a tmp cleaner, an administrator): the FIFOs made
   * in it are gone too, and it is made again, private as before. Something
   * else at its path (made by someone else meanwhile) is never used.
   */
  recreate(): void {
    this.ready.length = 0;
    try {
      mkdirSync(this.directory, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const found = lstatSync(this.directory);
    const uid = process.getuid?.();
    if (!found.isDirectory() || (uid !== undefined && found.uid !== uid) || (found.mode & 0o077) !== 0) {
      throw new Error(`${this.directory} is not this daemon's private directory any more`);
    }
  }

  private refill(): Promise<void> {
    return (this.refilling ??= (async () => {
      try {
        if (!directoryExists(this.directory)) this.recreate();
        const paths = Array.from({ length: BATCH }, () => join(this.directory, `${this.prefix}-${this.made++}`));
        await execFileAsync("mkfifo", ["-m", "600", "--", ...paths], { env: { PATH: "/usr/bin:/bin" } });
        this.ready.push(...paths);
      } finally {
        this.refilling = undefined;
      }
    })());
  }
}

function directoryExists(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Both ends of the FIFO at `path`, in blocking mode: a child must not get a
 * non-blocking stdio. A blocking open of one end waits for the other end, so
 * an O_RDWR descriptor (which never waits, on Linux) stands in until both are open.
 */
export function openBothEnds(path: string): { read: number; write: number } {
  const both = openSync(path, constants.O_RDWR);
  let read: number | undefined;
  try {
    read = openSync(path, constants.O_RDONLY);
    return { read, write: openSync(path, constants.O_WRONLY) };
  } catch (error) {
    if (read !== undefined) closeSync(read);
    throw error;
  } finally {
    closeSync(both);
  }
}
