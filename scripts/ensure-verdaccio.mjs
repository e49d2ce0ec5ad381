// The registry test publishes our packages to a private npm registry on
// loopback and installs them from it, as a user installs from npm: Verdaccio,
// from npm, at the version pinned here. Installs it into .cache/verdaccio/
// when it is missing; fails loudly (never skips) when it cannot.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const VERDACCIO_VERSION = "6.8.0";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const verdaccioDir = join(root, ".cache", "verdaccio");
export const verdaccioBin = join(verdaccioDir, "node_modules/verdaccio/bin/verdaccio");

function installedVersion() {
  try {
    return JSON.parse(readFileSync(join(verdaccioDir, "node_modules/verdaccio/package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

export function ensureVerdaccio() {
  if (installedVersion() === VERDACCIO_VERSION && existsSync(verdaccioBin)) return verdaccioBin;
  console.log(`test setup: installing verdaccio@${VERDACCIO_VERSION} into .cache/verdaccio (about 60 MB)...`);
  mkdirSync(verdaccioDir, { recursive: true });
  // Its own package.json, so npm does not treat it as part of this workspace. Verdaccio 6.8's
  // audit plugin asks for node-fetch by a dist-tag ("cjs") that npm no longer has, so the
  // install fails without the override; 2.7.0 is the CommonJS node-fetch it was written for.
  const manifest = { name: "execmux-verdaccio", private: true, dependencies: { verdaccio: VERDACCIO_VERSION }, overrides: { "node-fetch": "2.7.0" } };
  writeFileSync(join(verdaccioDir, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock"], { cwd: verdaccioDir, stdio: "inherit" });
  const version = installedVersion();
  if (version !== VERDACCIO_VERSION) throw new Error(`verdaccio did not install: found ${version ?? "nothing"} in ${verdaccioDir}`);
  return verdaccioBin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(`test setup: verdaccio ${ensureVerdaccio()} is ${VERDACCIO_VERSION}`);
  } catch (error) {
    console.error(`test setup FAILED: ${error.message}`);
    process.exit(1);
  }
}
