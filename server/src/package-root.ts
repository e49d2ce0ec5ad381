/**
 * The server package's directory (where its package.json is), found from
 * this module's own location: the same whether the daemon runs from dist/
 * as tsc wrote it or from the bundle built from it (scripts/build-bundle.mjs).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(from: string): string {
  for (let directory = from; ; directory = dirname(directory)) {
    const manifest = join(directory, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "@execmux/server") return directory;
    if (dirname(directory) === directory) throw new Error(`cannot find the @execmux/server package above ${from}`);
  }
}

export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the package. */
export const inPackage = (...parts: string[]) => join(PACKAGE_ROOT, ...parts);
