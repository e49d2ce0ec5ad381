/**
 * A directory and its missing parents, as Rust's create_dir_all makes them.
 * Not Node's `mkdir({recursive: true})`: where a parent exists but refuses
 * new entries with ENOENT (`/proc/x`), Node retries the parent and the child
 * forever; here the child's error is the answer.
 */
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { errnoOf } from "./fs-error.js";

const isDirectory = (path: string) => stat(path).then((stats) => stats.isDirectory(), () => false);

export async function createDirectoryAll(path: string): Promise<void> {
  // Up from `path` to the first directory that exists or can be made...
  const missing: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    try {
      await mkdir(current);
      break;
    } catch (error) {
      if (errnoOf(error) === "ENOENT" && current !== "/") {
        missing.push(current);
        continue;
      }
      if (await isDirectory(current)) break;
      throw error;
    }
  }
  // ...then down again, each once; one made meanwhile by someone else is fine.
  for (const directory of missing.reverse()) {
    try {
      await mkdir(directory);
    } catch (error) {
      if (!(await isDirectory(directory))) throw error;
    }
  }
}
