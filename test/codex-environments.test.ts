/**
 * The README's ways of pointing Codex at execmux, with the real Codex agent
 * (`codex exec` of the pinned upstream) and a scripted model: an environment
 * in $CODEX_HOME/environments.toml with `url` and `auth_bearer_token`
 * against a daemon that requires that token, and one with `program` and
 * `args` that starts `execmux serve --listen stdio` (ssh in the README; the
 * command it runs on the far side, here).
 */
import { randomBytes } from "node:crypto";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, spawnDaemon } from "./helpers/cli.js";
import { runCodexAgent } from "./helpers/codex-agent.js";
import { handshake } from "./helpers/http.js";
import { MockModel, type Turn } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";

/**
 * The daemon's environment carries this mark, and Codex inherits the
 * environment it runs in (its envPolicy is "all"), where the agent's own has
 * none: the mark in the file shows the command ran under execmux.
 */
const MARK = `execmux-${randomBytes(6).toString("hex")}`;
const turns: Turn[] = [() => ({ calls: [{ name: "exec_command", arguments: { cmd: "echo \"$DAEMON_MARK\" > from-agent.txt" } }] }), () => ({ message: "ran it" })];

async function runAgent(environmentsToml: string): Promise<string> {
  const project = realpathSync(scratchDirectory("codex-environment-project"));
  const model = await MockModel.start(turns);
  const run = await runCodexAgent({ environmentsToml, modelBaseUrl: model.baseUrl, projectDir: project, prompt: "Run the scripted steps." });
  expect(model.failures, run.stderr).toEqual([]);
  expect(run, run.stderr).toMatchObject({ exitCode: 0, timedOut: false });
  expect(model.toolResults[0]!.output).toContain("Process exited with code 0");
  return readFileSync(join(project, "from-agent.txt"), "utf8");
}

describe("Codex pointed at execmux as the README shows", () => {
  it("uses a daemon that requires a token, named by url and auth_bearer_token in environments.toml", async () => {
    const token = randomBytes(32).toString("hex");
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { EXECMUX_TOKEN: token, DAEMON_MARK: MARK, HOME: scratchDirectory("codex-environment-home") });
    // Without the token the daemon refuses the upgrade.
    expect((await handshake(daemon.url)).status).toBe(401);
    expect(await runAgent(`default = "devbox"\n\n[[environments]]\nid = "devbox"\nurl = "${daemon.url}"\nauth_bearer_token = "${token}"\n`)).toBe(`${MARK}\n`);
  });

  it("starts `execmux serve --listen stdio` itself, from program and args in environments.toml", async () => {
    // `env` sets the mark for the daemon it starts, as ssh would run it on the far side.
    const args = [`DAEMON_MARK=${MARK}`, process.execPath, CLI, "serve", "--listen", "stdio"];
    const toml = `default = "devbox"\n\n[[environments]]\nid = "devbox"\nprogram = "env"\nargs = ${JSON.stringify(args)}\n`;
    expect(await runAgent(toml)).toBe(`${MARK}\n`);
  });
});
