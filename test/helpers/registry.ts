/**
 * A private npm registry on loopback (Verdaccio, pinned and installed by
 * scripts/ensure-verdaccio.mjs) holding our packages as `npm pack` makes
 * them: what a user installs from npm, without publishing anything.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, vi } from "vitest";
import { freePort } from "./free-port.js";
// @ts-expect-error: a plain .mjs script without types; only its constants are used.
import { VERDACCIO_VERSION, verdaccioBin } from "../../scripts/ensure-verdaccio.mjs";

const repository = fileURLToPath(new URL("../..", import.meta.url));
const WORKSPACES = ["shared", "client-sdk", "server"] as const;

export interface LocalRegistry {
  /** http://127.0.0.1:PORT/ */
  readonly url: string;
  /** A token that may publish. */
  readonly token: string;
  readonly child: ChildProcess;
  /** Writes a project .npmrc that takes the @execmux scope from this registry (and may publish there). */
  npmrc(directory: string): void;
  stop(): void;
}

/**
 * Starts Verdaccio in `directory`. With `proxyNpm`, packages other than
 * @execmux/* come through it from the npm registry, so a client that knows
 * only this registry (a container build) gets everything from it.
 */
export async function startRegistry(directory: string, env: NodeJS.ProcessEnv, options: { proxyNpm?: boolean } = {}): Promise<LocalRegistry> {
  const bin = verdaccioBin as string;
  if (!existsSync(bin)) throw new Error(`verdaccio ${VERDACCIO_VERSION as string} is missing at ${bin}: run node scripts/ensure-verdaccio.mjs (npm test does)`);
  mkdirSync(directory, { recursive: true });
  const port = await freePort();
  const config = [
    `storage: ${join(directory, "storage")}`,
    `auth: { htpasswd: { file: ${join(directory, "htpasswd")} } }`,
    "web: { enable: false }",
    ...(options.proxyNpm ? ["uplinks: { npmjs: { url: https://registry.npmjs.org/ } }"] : []),
    "packages:",
    "  '@execmux/*': { access: $all, publish: $authenticated }",
    ...(options.proxyNpm ? ["  '**': { access: $all, proxy: npmjs }"] : []),
    "log: { type: stdout, format: json, level: error }",
    "",
  ].join("\n");
  writeFileSync(join(directory, "config.yaml"), config);
  const child = spawn(process.execPath, [bin, "--config", join(directory, "config.yaml"), "--listen", `127.0.0.1:${port}`], { env, stdio: ["ignore", "ignore", "ignore"] });
  const url = `http://127.0.0.1:${port}/`;
  try {
    await vi.waitFor(async () => expect((await fetch(`${url}-/ping`).catch(() => undefined))?.status).toBe(200), { timeout: 30_000, interval: 200 });
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  // What `npm adduser` sends.
  const response = await fetch(`${url}-/user/org.couchdb.user:release`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "release", password: "release-password" }),
  });
  const { token } = (await response.json()) as { token: string };
  const npmrc = (target: string) => {
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, ".npmrc"), `@execmux:registry=${url}\n${url.replace(/^http:/, "")}:_authToken=${token}\n`);
  };
  return { url, token, child, npmrc, stop: () => child.kill("SIGKILL") };
}

/** `npm pack` of the three packages into `directory`, then `npm publish` of each to the registry. */
export function publishPackages(registry: LocalRegistry, directory: string, env: NodeJS.ProcessEnv): void {
  registry.npmrc(directory);
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", directory, ...WORKSPACES.flatMap((name) => ["--workspace", name])], { cwd: repository, encoding: "utf8", env }),
  ) as { filename: string }[];
  expect(packed.length).toBe(WORKSPACES.length);
  for (const { filename } of packed) {
    execFileSync("npm", ["publish", join(directory, filename), "--registry", registry.url], { cwd: directory, env, stdio: ["ignore", "ignore", "pipe"] });
  }
}
