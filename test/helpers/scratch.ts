/** A private temporary directory for the running test, removed when it finishes. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";

export function scratchDirectory(purpose: string): string {
  const directory = mkdtempSync(join(tmpdir(), `execmux-${purpose}-`));
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}
