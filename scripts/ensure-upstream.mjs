// The differential tests, the Codex agent tests and the bench run the real
// upstream: `codex exec-server` and the Codex CLI from npm @openai/codex, at
// the version pinned here, or at the one EXECMUX_UPSTREAM_CODEX_VERSION names
// (to run the same suites against an older or newer release). Each version is
// installed into a directory of its own, .cache/upstream-codex-<version>/, so
// switching back and forth installs nothing twice. Installs it when missing;
// fails loudly (never skips) when it cannot.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The release the suites are verified against (and the default). */
export const PINNED_UPSTREAM_CODEX_VERSION = "0.171.0";
/** Older releases the suites are also run against (EXECMUX_UPSTREAM_CODEX_VERSION=<one of these>). */
export const ALSO_VERIFIED_UPSTREAM_CODEX_VERSIONS = ["0.169.0"];

function chosenVersion() {
  const requested = process.env.EXECMUX_UPSTREAM_CODEX_VERSION?.trim();
  if (!requested) return PINNED_UPSTREAM_CODEX_VERSION;
  // An exact release only: it becomes an npm spec and a directory name.
  if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(requested)) {
    throw new Error(`EXECMUX_UPSTREAM_CODEX_VERSION must be an exact release such as 0.169.0, not ${JSON.stringify(requested)}`);
  }
  return requested;
}

export const UPSTREAM_CODEX_VERSION = chosenVersion();
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const upstreamDir = join(root, ".cache", `upstream-codex-${UPSTREAM_CODEX_VERSION}`);
export const upstreamBinary = join(
  upstreamDir,
  "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
);

function installedVersion() {
  try {
    return execFileSync(upstreamBinary, ["--version"], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

export function ensureUpstream() {
  if (installedVersion() === `codex-cli ${UPSTREAM_CODEX_VERSION}`) return upstreamBinary;
  console.log(`test setup: installing the upstream @openai/codex@${UPSTREAM_CODEX_VERSION} into ${upstreamDir} (about 400 MB)...`);
  mkdirSync(upstreamDir, { recursive: true });
  // Its own package.json, so npm does not treat it as part of this workspace.
  writeFileSync(join(upstreamDir, "package.json"), JSON.stringify({ name: "execmux-upstream-codex", private: true }) + "\n");
  execFileSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", `@openai/codex@${UPSTREAM_CODEX_VERSION}`], {
    cwd: upstreamDir,
    stdio: "inherit",
  });
  const version = installedVersion();
  if (version !== `codex-cli ${UPSTREAM_CODEX_VERSION}`) {
    throw new Error(`upstream codex did not install: ${upstreamBinary} reports ${version ?? "nothing"}`);
  }
  return upstreamBinary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(`test setup: upstream ${ensureUpstream()} is ${UPSTREAM_CODEX_VERSION}`);
  } catch (error) {
    console.error(`test setup FAILED: ${error.message}`);
    process.exit(1);
  }
}
