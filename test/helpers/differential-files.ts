/**
 * A case's files, declared as data and made in each server's own scratch
 * directory before the steps run; and the tree as it is afterwards, so a case
 * can compare what each server did to the disk, not only what it replied.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * A file's text, or a directory, a FIFO, a symlink (to a target as given, relative or
 * `<scratch>/...`), a sparse file of a size (limits without writing the bytes),
 * a file with the execute bits set (mode 755), or bytes that are not UTF-8 text.
 */
export type ScratchEntry =
  | string
  | { directory: true }
  | { fifo: true }
  | { symlink: string }
  | { sparseBytes: number }
  | { executable: string }
  | { bytes: readonly number[] };

export type ScratchFiles = Record<string, ScratchEntry>;

export function createScratchFiles(scratch: string, files: ScratchFiles): void {
  for (const [name, entry] of Object.entries(files)) {
    const path = join(scratch, name);
    mkdirSync(dirname(path), { recursive: true });
    if (typeof entry === "string") writeFileSync(path, entry);
    else if ("directory" in entry) mkdirSync(path, { recursive: true });
    else if ("fifo" in entry) execFileSync("mkfifo", [path]);
    else if ("executable" in entry) {
      writeFileSync(path, entry.executable);
      chmodSync(path, 0o755);
    } else if ("bytes" in entry) writeFileSync(path, Uint8Array.from(entry.bytes));
    else if ("sparseBytes" in entry) {
      writeFileSync(path, "");
      truncateSync(path, entry.sparseBytes);
    }
    else symlinkSync(entry.symlink.replaceAll("<scratch>", scratch), path);
  }
}

/** Every path under the scratch directory, sorted, with what it is: `name: "text"`, `dir/`, `-> target`, `fifo`. */
export function scratchTree(scratch: string): string[] {
  const lines: string[] = [];
  const visit = (relative: string) => {
    for (const name of readdirSync(join(scratch, relative)).sort()) {
      const path = join(relative, name);
      const stat = lstatSync(join(scratch, path));
      if (stat.isSymbolicLink()) lines.push(`${path} -> ${readlinkSync(join(scratch, path)).replaceAll(scratch, "<scratch>")}`);
      else if (stat.isDirectory()) {
        lines.push(`${path}/`);
        visit(path);
      } else if (stat.isFIFO()) lines.push(`${path} (fifo)`);
      else lines.push(`${path}: ${JSON.stringify(readFileSync(join(scratch, path), "utf8"))}`);
    }
  };
  visit("");
  return lines;
}
