/**
 * The shell-snapshot pieces as pure units: the cache's rules (16 entries a
 * session, one capture shared, retries a second apart and three in all, the
 * per-identity and daemon byte budgets, at most 2 captures of an identity at
 * once, an ended session's snapshots let go), parsing a capture's output
 * (markers, UTF-8, the 512 KiB bounds, the environment's filters) and the
 * replay (upstream's flags, the state split into 60 KiB variables on
 * character boundaries, which environment wins).
 */
import { describe, expect, it } from "vitest";
import { MAX_BYTES, MAX_BYTES_PER_IDENTITY, MAX_ENTRIES_PER_SESSION, SnapshotCache } from "../server/dist/shell-snapshot/cache.js";
import { MAX_ENVIRONMENT_BYTES, MAX_STATE_BYTES, parseCapture, type ShellSnapshot } from "../server/dist/shell-snapshot/parse.js";
import { replay } from "../server/dist/shell-snapshot/replay.js";
import { END_MARKER, STATE_MARKER } from "../server/dist/shell-snapshot/scripts.js";

const snapshotOf = (bytes: number, state = "# Snapshot file\n"): ShellSnapshot => ({ state, environment: {}, bytes });

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("the snapshot cache", () => {
  const live = () => true;

  it("shares one capture among concurrent starts of the same key, and keeps its result", async () => {
    const cache = new SnapshotCache(live);
    const session = {};
    let captures = 0;
    let release: (snapshot: ShellSnapshot) => void = () => undefined;
    const capture = () => {
      captures++;
      return new Promise<ShellSnapshot>((resolve) => (release = resolve));
    };
    const first = cache.get(session, "id", "key", capture);
    const second = cache.get(session, "id", "key", capture);
    await expect.poll(() => captures).toBe(1);
    release(snapshotOf(10));
    expect(await first).toEqual(snapshotOf(10));
    expect(await second).toBe(await first);
    expect(await cache.get(session, "id", "key", capture)).toBe(await first);
    expect(captures).toBe(1);
  });

  it("keeps 16 entries a session: the least recently used goes", async () => {
    const cache = new SnapshotCache(live);
    const session = {};
    const captured: string[] = [];
    const get = (key: string) => cache.get(session, "id", key, async () => (captured.push(key), snapshotOf(1)));
    for (let index = 0; index <= MAX_ENTRIES_PER_SESSION; index++) await get(`k${index}`);
    await get("k1");
    await get("k0");
    expect(captured).toEqual([...Array.from({ length: MAX_ENTRIES_PER_SESSION + 1 }, (_, index) => `k${index}`), "k0"]);
    // Another session has entries of its own.
    await cache.get({}, "id", "k1", async () => (captured.push("other k1"), snapshotOf(1)));
    expect(captured.at(-1)).toBe("other k1");
  });

  it("remembers a failure: no new try within a second, then one, three tries in all", async () => {
    const time = clock();
    const cache = new SnapshotCache(live, time.now);
    const session = {};
    let tries = 0;
    const get = () => cache.get(session, "id", "key", async () => (tries++, undefined));
    expect(await get()).toBeUndefined();
    expect(await get()).toBeUndefined();
    expect(tries).toBe(1);
    time.advance(999);
    await get();
    expect(tries).toBe(1);
    time.advance(1);
    await get();
    expect(tries).toBe(2);
    time.advance(1000);
    await get();
    expect(tries).toBe(3);
    time.advance(60_000);
    await get();
    expect(tries).toBe(3);
  });

  it("a capture that throws counts as failed", async () => {
    const cache = new SnapshotCache(live);
    expect(await cache.get({}, "id", "key", () => Promise.reject(new Error("spawner gone")))).toBeUndefined();
  });

  it("holds an identity's snapshots within 16 MiB and all within 64 MiB, least recently used out first", async () => {
    const cache = new SnapshotCache(live);
    const big = MAX_BYTES_PER_IDENTITY / 4;
    const sessions = [{}, {}];
    // Two sessions of one identity, five quarter-budget snapshots: the oldest one goes.
    for (let index = 0; index < 5; index++) await cache.get(sessions[index % 2]!, "alice", `k${index}`, async () => snapshotOf(big));
    expect(cache.heldBytes("alice")).toBeLessThanOrEqual(MAX_BYTES_PER_IDENTITY);
    let recaptured = false;
    await cache.get(sessions[0]!, "alice", "k0", async () => ((recaptured = true), snapshotOf(big)));
    expect(recaptured).toBe(true);
    // Many identities: the daemon's budget holds, and another identity's entries go first only once it is over.
    for (let index = 0; index < 12; index++) await cache.get({}, `user-${index}`, "k", async () => snapshotOf(big * 2));
    expect(cache.heldBytes()).toBeLessThanOrEqual(MAX_BYTES);
    expect(cache.heldBytes("user-11")).toBe(big * 2 + 1024);
  });

  it("lets go of the snapshots of an ended session", async () => {
    const ended = new Set<object>();
    const cache = new SnapshotCache((session) => !ended.has(session));
    const session = {};
    await cache.get(session, "alice", "key", async () => snapshotOf(1000));
    expect(cache.heldBytes("alice")).toBe(1000 + 1024);
    ended.add(session);
    expect(cache.heldBytes("alice")).toBe(0);
  });

  it("runs at most 2 captures of an identity at once; the next starts when one ends", async () => {
    const cache = new SnapshotCache(live);
    const session = {};
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const capture = () =>
      new Promise<ShellSnapshot>((resolve) => {
        running++;
        most = Math.max(most, running);
        releases.push(() => {
          running--;
          resolve(snapshotOf(1));
        });
      });
    const gets = [0, 1, 2, 3].map((index) => cache.get(session, "alice", `k${index}`, capture));
    const other = cache.get({}, "bob", "k", capture);
    await expect.poll(() => running).toBe(3);
    expect(most).toBe(3);
    releases.shift()!();
    // One of alice's ended: her third starts.
    await expect.poll(() => releases.length).toBe(3);
    let finished = false;
    const all = Promise.all([...gets, other]).then(() => (finished = true));
    while (!finished) {
      await expect.poll(() => releases.length > 0 || finished).toBe(true);
      releases.shift()?.();
    }
    await all;
    expect(most).toBe(3);
  });
});

const capture = (state: string | Buffer, environment: string[], noise = "profile says hello\n") =>
  Buffer.concat([Buffer.from(noise), Buffer.from(STATE_MARKER), Buffer.from(state), Buffer.from("\0"), Buffer.from(environment.map((entry) => `${entry}\0`).join("")), Buffer.from(END_MARKER)]);

describe("a capture's output", () => {
  it("gives the state and the environment between the markers, whatever the startup files printed", () => {
    const parsed = parseCapture(capture("# Snapshot file\nf() { :; }\n", ["A=1", "B=two=2", "PWD=/x", "OLDPWD=/y", "NOEQUALS", "MULTI=a\nb"]), null, "/");
    expect(parsed).toEqual({
      snapshot: { state: "# Snapshot file\nf() { :; }\n", environment: { A: "1", B: "two=2", MULTI: "a\nb" }, bytes: expect.any(Number) },
    });
  });

  it("drops Codex's non-inheritable credentials (any case), and a previous proxy's settings", () => {
    const parsed = parseCapture(
      capture("s", ["node_repl_auth_token=x", "OPENAI_IDENTITY_TOKEN_FILE=/f", "CODEX_NETWORK_PROXY_ACTIVE=1", "HTTP_PROXY=http://127.0.0.1:1", "NO_PROXY=", "KEEP=1"]),
      null,
      "/",
    );
    expect("snapshot" in parsed && parsed.snapshot.environment).toEqual({ KEEP: "1" });
  });

  it("filters the environment by the request's policy, inheriting everything the profile exported", () => {
    const policy = { inherit: "none" as const, ignoreDefaultExcludes: false, exclude: ["DROP*"], set: { ADDED: "yes" }, includeOnly: [] };
    const parsed = parseCapture(capture("s", ["KEEP=1", "DROP_ME=1", "API_TOKEN=secret"]), policy, "/");
    expect("snapshot" in parsed && parsed.snapshot.environment).toEqual({ KEEP: "1", ADDED: "yes" });
  });

  it("fails without its markers, with a state that is not UTF-8, or past 512 KiB of state or of environment", () => {
    expect(parseCapture(Buffer.from("no markers here"), null, "/")).toEqual({ failure: expect.stringContaining("no snapshot") });
    expect(parseCapture(capture(Buffer.from([0x23, 0xff, 0xfe]), []), null, "/")).toEqual({ failure: expect.stringContaining("UTF-8") });
    expect(parseCapture(capture("x".repeat(MAX_STATE_BYTES), []), null, "/")).toHaveProperty("snapshot");
    expect(parseCapture(capture("x".repeat(MAX_STATE_BYTES + 1), []), null, "/")).toEqual({ failure: expect.stringContaining("state") });
    const entry = `V=${"v".repeat(MAX_ENVIRONMENT_BYTES - 3)}`;
    expect(parseCapture(capture("s", [entry]), null, "/")).toHaveProperty("snapshot");
    expect(parseCapture(capture("s", [entry, "W=1"]), null, "/")).toEqual({ failure: expect.stringContaining("environment") });
  });

  it("skips an environment entry that is not UTF-8", () => {
    const output = Buffer.concat([Buffer.from(STATE_MARKER), Buffer.from("s\0"), Buffer.from([0x42, 0x3d, 0xff, 0]), Buffer.from("C=3\0"), Buffer.from(END_MARKER)]);
    const parsed = parseCapture(output, null, "/");
    expect("snapshot" in parsed && parsed.snapshot.environment).toEqual({ C: "3" });
  });
});

describe("a replay", () => {
  const snapshot = (state: string, environment: Record<string, string> = {}): ShellSnapshot => ({ state, environment, bytes: state.length });

  it("starts each shell without its startup files, restores the state, then runs the script with its arguments", () => {
    const bash = replay("bash", snapshot("S"), ["/bin/bash", "-lc", "echo hi", "zero", "one"], {}, undefined);
    expect(bash.argv).toEqual([
      "/bin/bash",
      "-pc",
      "set +o privileged\nif ! eval \"unset __CODEX_SHELL_SNAPSHOT_STATE_0;${__CODEX_SHELL_SNAPSHOT_STATE_0}\" >/dev/null; then printf 'failed to restore shell snapshot\\n' >&2; fi\necho hi",
      "zero",
      "one",
    ]);
    expect(bash.env).toEqual({ __CODEX_SHELL_SNAPSHOT_STATE_0: "S" });
    expect(replay("zsh", snapshot("S"), ["/bin/zsh", "-lc", "x"], {}, undefined).argv.slice(1, 2)).toEqual(["-fc"]);
    expect(replay("zsh", snapshot("S"), ["/bin/zsh", "-lc", "x"], {}, undefined).argv[2]).toMatch(/^setopt RCS\nif ! eval /);
    // sh: upstream's two-line form.
    expect(replay("sh", snapshot("S"), ["/bin/sh", "-lc", "x"], {}, undefined).argv).toEqual([
      "/bin/sh",
      "-c",
      "if ! eval \"unset __CODEX_SHELL_SNAPSHOT_STATE_0\n${__CODEX_SHELL_SNAPSHOT_STATE_0}\" >/dev/null; then printf 'failed to restore shell snapshot\\n' >&2; fi\nx",
    ]);
  });

  it("splits the state into 60 KiB variables, never inside a character", () => {
    const state = `${"a".repeat(60 * 1024 - 1)}é${"b".repeat(70 * 1024)}`;
    const { argv, env } = replay("bash", snapshot(state), ["/bin/bash", "-lc", "x"], {}, undefined);
    const pieces = Object.keys(env).sort().map((name) => env[name]!);
    expect(pieces.join("")).toBe(state);
    expect(pieces.map((piece) => Buffer.byteLength(piece))).toEqual([60 * 1024 - 1, 60 * 1024, 70 * 1024 + 2 - 60 * 1024]);
    expect(argv[2]).toContain('eval "unset __CODEX_SHELL_SNAPSHOT_STATE_0 __CODEX_SHELL_SNAPSHOT_STATE_1 __CODEX_SHELL_SNAPSHOT_STATE_2;');
  });

  it("lays the captured environment over the process's, and the request's variables over both", () => {
    const env = { PATH: "/daemon", HOME: "/h", FROM_POLICY: "p", OPENAI_FEDERATION_RULE_ID: "r" };
    const { env: merged } = replay("bash", snapshot("S", { PATH: "/profile", EXTRA: "e", HOME: "/captured" }), ["/bin/bash", "-lc", "x"], env, { HOME: "/h" });
    expect(merged).toEqual({ PATH: "/profile", HOME: "/h", FROM_POLICY: "p", EXTRA: "e", __CODEX_SHELL_SNAPSHOT_STATE_0: "S" });
  });
});
