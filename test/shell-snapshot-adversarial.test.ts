/**
 * Shell snapshots under attack, against `execmux serve` (daemon and process
 * host): a capture that floods its output is killed once it passes 4 MiB, one
 * that never ends is killed at 10 s, and neither leaves a process behind;
 * the commands run as they came and the daemon serves a bystander
 * throughout. Forty starts in forty scopes at once (captures queue, two of an
 * identity at a time) all run from their snapshots. A capture is no process
 * of the client's: no listing shows it, it dies with its session, and a
 * daemon restarted in the middle of one kills it rather than adopt it.
 */
import { readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { spawnDaemon } from "./helpers/cli.js";
import { freePort } from "./helpers/free-port.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient, b64 } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

/** A HOME whose profile runs `forACapture` when bash runs it for anything but `command`. */
function homeWith(forACapture: string, command: string): string {
  const home = realpathSync(scratchDirectory("snapshot-attack-home"));
  writeFileSync(join(home, ".profile"), `case "$BASH_EXECUTION_STRING" in *${JSON.stringify(command)}*) ;; *) ${forACapture} ;; esac\n`);
  return home;
}

/** The same `execmux serve` every time (a fixed port, a state directory): its process host outlives a SIGKILLed daemon. */
async function persistentCommand(): Promise<string[]> {
  return ["--listen", `ws://127.0.0.1:${await freePort()}`, "--log-level", "warn", "--state-directory", join(scratchDirectory("snapshot-state"), "state")];
}

/** Connects and initializes with `params` (a lifetime, a session to resume); the session's id. */
async function initialized(url: string, params: Record<string, unknown> = {}): Promise<{ client: WireClient; sessionId: string }> {
  const client = await WireClient.connect(url);
  const { sessionId } = await client.call<{ sessionId: string }>("initialize", { clientName: "snapshots", ...params });
  client.send({ method: "initialized", params: {} });
  return { client, sessionId };
}

const loginStart = (client: WireClient, processId: string, home: string, script: string, scopeId: string) =>
  client.request("process/start", {
    processId,
    argv: ["/bin/bash", "-lc", script],
    cwd: home,
    env: { PATH, HOME: home },
    tty: false,
    shellSnapshot: { scopeId, shell: { name: "bash", path: "/bin/bash" } },
  });

/** Processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe("shell snapshot captures that misbehave", () => {
  it("are killed past 4 MiB of output or 10 s, leave nothing behind, and the commands run as they came", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"]);
    const bystander = await WireClient.ready(daemon.url);
    await bystander.call("process/start", { processId: "cat", argv: ["cat"], cwd: "/tmp", env: { PATH }, tty: false, pipeStdin: true });
    const attacker = await WireClient.ready(daemon.url);
    const tag = randomUUID();
    const flood = homeWith(`exec -a snapshot-flood-${tag} yes`, "flood ran");
    const hang = homeWith(`exec -a snapshot-hang-${tag} sleep 600`, "hang ran");

    const replies = Promise.all([
      loginStart(attacker, "flood", flood, 'echo "flood ran"; shopt -q login_shell && echo login', "flood"),
      loginStart(attacker, "hang", hang, 'echo "hang ran"; shopt -q login_shell && echo login', "hang"),
    ]);
    // While the captures run, the daemon serves others.
    await bystander.call("process/write", { processId: "cat", chunk: b64("still served\n"), writeId: "w1" });
    await expect.poll(() => bystander.output("cat")).toContain("still served");
    for (const reply of await replies) expect(reply.error).toBeUndefined();
    await Promise.all([attacker.closedOf("flood"), attacker.closedOf("hang")]);
    expect(attacker.output("flood")).toBe("flood ran\nlogin\n");
    expect(attacker.output("hang")).toBe("hang ran\nlogin\n");
    // The killed captures' trees are gone (the hang's at once, the flood's with its output ended).
    await expect.poll(() => processesWith(tag), { timeout: 10_000 }).toEqual([]);
  }, 60_000);

  it("forty scopes at once: the captures queue, and every start runs from its own snapshot", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"]);
    const client = await WireClient.ready(daemon.url);
    const home = realpathSync(scratchDirectory("snapshot-many-home"));
    // About 100 KiB of functions per snapshot, and a count of the profile's runs.
    writeFileSync(join(home, ".profile"), `echo x >> "$HOME/count"\nBIG=$(head -c 100000 /dev/zero | tr '\\0' a)\neval "big() { echo $BIG; }"\ngreet() { echo "greet $1"; }\n`);
    const ids = Array.from({ length: 40 }, (_, index) => `p${index}`);
    const replies = await Promise.all(ids.map((id) => loginStart(client, id, home, `greet ${id}; shopt -q login_shell && echo login || echo not-login`, `scope-${id}`)));
    for (const reply of replies) expect(reply.error).toBeUndefined();
    await Promise.all(ids.map((id) => client.closedOf(id)));
    for (const id of ids) expect(client.output(id)).toBe(`greet ${id}\nnot-login\n`);
    expect(readFileSync(join(home, "count"), "utf8")).toBe("x\n".repeat(40));
  }, 60_000);
});

describe("a capture is no process of the client's", () => {
  it("no listing shows it, and it is killed with its session (before its own 10 s are up)", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"]);
    const { client } = await initialized(daemon.url, { detachedTtlMs: 0 });
    const tag = randomUUID();
    const home = homeWith(`exec -a snapshot-session-${tag} sleep 600`, "never");
    void loginStart(client, "start", home, "echo never", "scope");
    await expect.poll(() => processesWith(tag).length).toBe(1);
    const { processes } = await client.call<{ processes: unknown[] }>("process/list", {});
    expect(processes).toEqual([]);
    // The session ends with the connection (a TTL of 0): the host kills its tree, the capture with it.
    client.close();
    await expect.poll(() => processesWith(tag), { timeout: 8_000 }).toEqual([]);
  }, 30_000);

  it("a daemon SIGKILLed in the middle of one: the next daemon kills it rather than adopt it as a process", async () => {
    const command = await persistentCommand();
    let daemon = await spawnDaemon(command);
    const { client, sessionId } = await initialized(daemon.url);
    const tag = randomUUID();
    const home = homeWith(`exec -a snapshot-restart-${tag} sleep 600`, "never");
    void loginStart(client, "start", home, "echo never", "scope");
    await expect.poll(() => processesWith(tag).length).toBe(1);
    daemon.child.kill("SIGKILL");
    await daemon.exited;

    daemon = await spawnDaemon(command);
    try {
      const { client: resumed } = await initialized(daemon.url, { resumeSessionId: sessionId });
      const { processes } = await resumed.call<{ processes: unknown[] }>("process/list", {});
      expect(processes).toEqual([]);
      await expect.poll(() => processesWith(tag), { timeout: 8_000 }).toEqual([]);
    } finally {
      // SIGTERM, not the helper's SIGKILL: the persistent host ends with its daemon only then.
      daemon.child.kill("SIGTERM");
      expect((await daemon.exited).code).toBe(0);
    }
  }, 60_000);

  it("one identity's captures run two at a time, over all its connections", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"]);
    const clients = [await WireClient.ready(daemon.url), await WireClient.ready(daemon.url)];
    const home = realpathSync(scratchDirectory("snapshot-slots-home"));
    // Each capture notes how many captures run while it does (itself included).
    writeFileSync(join(home, ".profile"), 'mkdir -p "$HOME/running"; : > "$HOME/running/$$"; ls "$HOME/running" | wc -l >> "$HOME/concurrency"; sleep 0.2; rm "$HOME/running/$$"\n');
    const starts = clients.flatMap((client, which) =>
      Array.from({ length: 6 }, (_, index) => loginStart(client, `p${index}`, home, "echo ran", `scope-${which}-${index}`).then((reply) => ({ client, reply, id: `p${index}` }))),
    );
    for (const { client, reply, id } of await Promise.all(starts)) {
      expect(reply.error).toBeUndefined();
      await client.closedOf(id);
      expect(client.output(id)).toBe("ran\n");
    }
    const counts = readFileSync(join(home, "concurrency"), "utf8").trim().split("\n").map(Number);
    expect(counts).toHaveLength(12);
    expect(Math.max(...counts)).toBe(2);
  }, 60_000);
});
