// The differential tests, the Codex agent tests and the bench run the real
// upstream: `codex exec-server` and the Codex CLI from npm @openai/codex, at
// the version pinned here. Installs it into .cache/upstream-codex/ when it is
// missing; fails loudly (never skips) when it cannot.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const UPSTREAM_CODEX_VERSION = "0.169.0";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const upstreamDir = join(root, ".cache", "upstream-codex");
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
  console.log(`test setup: installing the upstream @openai/codex@${UPSTREAM_CODEX_VERSION} into .cache/upstream-codex (about 400 MB)...`);
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
