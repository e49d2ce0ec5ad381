/**
 * Shell snapshots under attack, against `execmux serve` (daemon and process
 * host): a capture that floods its output is killed once it passes 4 MiB, one
 * that never ends is killed at 10 s, and neither leaves a process behind;
 * the commands run as they came and the daemon serves a bystander
 * throughout. Forty starts in forty scopes at once (captures queue, two of an
 * identity at a time) all run from their snapshots.
 */
import { readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { spawnDaemon } from "./helpers/cli.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient, b64 } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

/** A HOME whose profile runs `forACapture` when bash runs it for anything but `command`. */
function homeWith(forACapture: string, command: string): string {
  const home = realpathSync(scratchDirectory("snapshot-attack-home"));
  writeFileSync(join(home, ".profile"), `case "$BASH_EXECUTION_STRING" in *${JSON.stringify(command)}*) ;; *) ${forACapture} ;; esac\n`);
  return home;
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
