/**
 * No sandbox profile reaches a file the daemon reads a secret from (issue
 * #34, item 1): token files, the JWT shared secret, the capability token,
 * the config file, TLS files and the state directory. A sandboxed process
 * finds them hidden whatever its profile grants (network on or off), and an
 * fs call made under a profile that runs in the daemon (one that reads the
 * whole disk) is refused them too, through a symlink as well. Each probe is
 * also run without a sandbox, where it reads the file: a broken probe cannot
 * pass for a hidden file.
 */
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { codexSandbox, ErrorCode, pathToFileUri, type FileSystemSandboxContext } from "@execmux/shared";
import { daemonFiles, loadConfig, startDaemon, type Daemon } from "@execmux/server";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";
import { afterEach } from "vitest";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const TOKEN = "static-token-0123456789abcdef0123456789abcdef";

const running: Daemon[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.close()));
});

/** Secret files of every kind, each holding a marker that must never come out of a sandbox. */
function secrets(directory: string, tls = false) {
  const write = (name: string, text: string) => {
    const path = join(directory, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  return {
    tokenFile: write("tokens", `${TOKEN}\n`),
    observerTokenFile: write("observer-tokens", "MARKER-observer-token\n"),
    wsSharedSecretFile: write("jwt-secret", "MARKER-jwt-shared-secret-0123456789abcdef0123\n"),
    config: write("config.json", JSON.stringify({ token: "MARKER-token-in-config-file" })),
    // The TLS key's hiding has its own test (the daemon must then speak TLS): listed here only.
    ...(tls ? { tlsCert: write("cert.pem", "MARKER-cert\n"), tlsKey: write("key.pem", "MARKER-tls-key\n") } : {}),
  };
}

async function daemonWithSecrets(): Promise<{ daemon: Daemon; files: ReturnType<typeof secrets>; project: string }> {
  const directory = scratchDirectory("sandbox-secrets");
  const files = secrets(directory);
  const config = loadConfig(["--config", files.config], {}, {
    listen: "ws://127.0.0.1:0",
    logLevel: "silent",
    tokenFile: files.tokenFile,
    observerTokenFile: files.observerTokenFile,
    wsAuth: "signed-bearer-token",
    wsSharedSecretFile: files.wsSharedSecretFile,
    stateDirectory: join(directory, "state"),
  });
  mkdirSync(config.stateDirectory, { mode: 0o700 });
  const daemon = await startDaemon(config);
  running.push(daemon);
  return { daemon, files, project: scratchDirectory("sandbox-secrets-project") };
}

function withNetwork(sandbox: FileSystemSandboxContext, network: "enabled" | "restricted"): FileSystemSandboxContext {
  return { ...sandbox, permissions: { ...sandbox.permissions, network } } as FileSystemSandboxContext;
}

let nextId = 0;
async function run(client: WireClient, cwd: string, script: string, sandbox: FileSystemSandboxContext | null): Promise<string> {
  const processId = `p${nextId++}`;
  await client.call("process/start", { processId, argv: ["bash", "--noprofile", "--norc", "-c", script], cwd: pathToFileUri(cwd), env: { PATH }, tty: false, sandbox });
  await client.closedOf(processId);
  return client.output(processId);
}

describe("the daemon's secret files, from inside a sandbox", () => {
  it("lists every file a setting names for the daemon alone, the config file and the state directory included", () => {
    const directory = scratchDirectory("daemon-files");
    const files = secrets(directory, true);
    const config = loadConfig(["--config", files.config], {}, { ...files, wsTokenFile: join(directory, "capability"), stateDirectory: join(directory, "state") });
    expect(daemonFiles(config).sort()).toEqual(
      [files.config, files.tokenFile, files.observerTokenFile, files.wsSharedSecretFile, files.tlsCert!, files.tlsKey!, join(directory, "capability"), join(directory, "state")].sort(),
    );
  });

  it.each(["restricted", "enabled"] as const)("are hidden from a sandboxed process with the network %s, through symlinks too", async (network) => {
    const { daemon, files, project } = await daemonWithSecrets();
    const client = await WireClient.ready(daemon.url, TOKEN);
    for (const [name, path] of Object.entries(files)) symlinkSync(path, join(project, `link-${name}`));
    const script = [...Object.values(files), ...Object.keys(files).map((name) => `link-${name}`)].map((path) => `cat ${path} 2>&1`).join("; ");

    const confined = await run(client, project, script, withNetwork(codexSandbox("workspace-write", project), network));
    expect(confined).not.toContain("MARKER");
    expect(confined).not.toContain(TOKEN);
    // Read-only profiles too.
    const readOnly = await run(client, project, script, withNetwork(codexSandbox("read-only", project), network));
    expect(readOnly).not.toContain("MARKER");
    expect(readOnly).not.toContain(TOKEN);

    // The probe reads them where nothing hides them.
    const free = await run(client, project, script, null);
    expect(free).toContain("MARKER-jwt-shared-secret");
    expect(free).toContain("MARKER-token-in-config-file");
    expect(free).toContain("MARKER-observer-token");
    expect(free).toContain(TOKEN);
  });

  it("are refused to fs calls under a profile that reads the whole disk, by any name", async () => {
    const { daemon, files, project } = await daemonWithSecrets();
    const client = await WireClient.ready(daemon.url, TOKEN);
    const sandbox = codexSandbox("workspace-write", project);
    symlinkSync(files.tokenFile, join(project, "link"));
    linkSync(files.wsSharedSecretFile, join(project, "hard"));
    const names = [...Object.values(files), join(project, "link"), join(project, "hard")];
    for (const path of names) {
      const refused = await client.request("fs/readFile", { path: pathToFileUri(path), sandbox });
      expect(refused.error?.code, path).toBe(ErrorCode.InvalidRequest);
      expect(refused.error?.message, path).toContain("Permission denied");
      const metadata = await client.request("fs/getMetadata", { path: pathToFileUri(path), sandbox });
      expect(metadata.error?.code, path).toBe(ErrorCode.InvalidRequest);
    }
    const listing = await client.request("fs/readDirectory", { path: pathToFileUri(join(files.tokenFile, "..", "state")), sandbox });
    expect(listing.error?.code).toBe(ErrorCode.InvalidRequest);
    // Without a sandbox the same calls read them.
    const free = await client.call("fs/readFile", { path: pathToFileUri(join(project, "hard")) });
    expect(Buffer.from(String(free.dataBase64), "base64").toString()).toContain("MARKER-jwt-shared-secret");
  });
});
