/**
 * A sandboxed process never talks to the daemon as a client (issue #34,
 * item 0). A workspace-write sandbox with the network on (Codex's
 * `network_access = true`) shares the machine's loopback, so it can open a
 * socket to the daemon; the daemon refuses it before reading the request,
 * whether a token is needed or not and even when the sandbox holds the
 * token, under both containments (cgroup: the socket's cgroup says so;
 * process-tree: no process outside a sandbox holds the socket). The same
 * client run outside the sandbox gets in: the probe works.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { codexSandbox, pathToFileUri, type FileSystemSandboxContext } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const WS_MODULE = fileURLToPath(new URL("../node_modules/ws/index.js", import.meta.url));
const TOKEN = "reach-test-token-0123456789abcdef";

/**
 * A full client in a few lines: upgrade, initialize, start `touch MARKER`
 * outside every writable root. Prints what happened.
 */
const CLIENT = `
const WebSocket = require(${JSON.stringify(WS_MODULE)});
const [url, marker, token] = process.argv.slice(1);
const ws = new WebSocket(url, token ? { headers: { authorization: "Bearer " + token } } : {});
ws.on("unexpected-response", (_req, res) => { console.log("refused " + res.statusCode); process.exit(0); });
ws.on("error", (e) => { console.log("error " + e.message); process.exit(0); });
ws.on("open", () => {
  ws.send(JSON.stringify({ id: 1, method: "initialize", params: { clientName: "escape" } }));
  ws.send(JSON.stringify({ method: "initialized", params: {} }));
  ws.send(JSON.stringify({ id: 2, method: "process/start", params: { processId: "x", argv: ["touch", marker], cwd: "/", env: {} } }));
});
ws.on("message", (data) => { const m = JSON.parse(data); if (m.method === "process/closed") { console.log("ran"); process.exit(0); } });
setTimeout(() => { console.log("timeout"); process.exit(0); }, 10000);
`;

function withNetwork(sandbox: FileSystemSandboxContext): FileSystemSandboxContext {
  return { ...sandbox, permissions: { ...sandbox.permissions, network: "enabled" } } as FileSystemSandboxContext;
}

let nextId = 0;
async function run(client: WireClient, cwd: string, argv: string[], sandbox: FileSystemSandboxContext | null, env: Record<string, string> = {}): Promise<string> {
  const processId = `p${nextId++}`;
  await client.call("process/start", { processId, argv, cwd: pathToFileUri(cwd), env: { PATH, ...env }, tty: false, sandbox });
  await client.closedOf(processId);
  return client.output(processId) + client.output(processId, "stderr");
}

function outsideMarker(): string {
  const directory = mkdtempSync("/var/tmp/execmux-reach-");
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  return join(directory, "escaped");
}

describe.each(["cgroup", "process-tree"] as const)("a sandboxed process reaching the daemon (%s containment)", (containment) => {
  it("is refused by a daemon without a token, before it can start anything; outside the sandbox the same client runs", async () => {
    const daemon = await startTestDaemon({ processContainment: containment });
    const client = await WireClient.ready(daemon.url);
    const project = scratchDirectory("reach-project");
    const marker = outsideMarker();
    const sandbox = withNetwork(codexSandbox("workspace-write", project));

    const confined = await run(client, project, [process.execPath, "-e", CLIENT, daemon.url, marker], sandbox);
    expect(confined.trim()).toBe("refused 403");
    expect(existsSync(marker)).toBe(false);
    // Raw HTTP too: no path of the daemon answers a sandboxed process.
    const port = new URL(daemon.url).port;
    const raw = await run(client, project, ["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port}; printf 'GET /readyz HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' >&3; timeout 5 head -1 <&3`], sandbox);
    expect(raw).toMatch(/^HTTP\/1.1 403/);

    const free = await run(client, project, [process.execPath, "-e", CLIENT, daemon.url, marker], null);
    expect(free.trim()).toBe("ran");
    expect(existsSync(marker)).toBe(true);
  });

  it("is refused even when the sandbox holds the daemon's token", async () => {
    const daemon = await startTestDaemon({ processContainment: containment, token: TOKEN });
    const client = await WireClient.ready(daemon.url, TOKEN);
    const project = scratchDirectory("reach-project");
    const marker = outsideMarker();
    const sandbox = withNetwork(codexSandbox("workspace-write", project));

    const confined = await run(client, project, [process.execPath, "-e", CLIENT, daemon.url, marker, TOKEN], sandbox);
    expect(confined.trim()).toBe("refused 403");
    expect(existsSync(marker)).toBe(false);

    const free = await run(client, project, [process.execPath, "-e", CLIENT, daemon.url, marker, TOKEN], null);
    expect(free.trim()).toBe("ran");
  });
});
