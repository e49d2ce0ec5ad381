/**
 * Upstream's `--ws-auth` modes on a real daemon: a capability token (file or
 * SHA-256) and signed JWT bearer tokens (HS256, exp/nbf/iat with the skew,
 * iss, aud). Each answer is compared with the real upstream
 * `codex exec-server` started with the same options: status and body.
 */
import { spawnSync } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { connect } from "@execmux/client";
import type { Config } from "@execmux/server";
import { runCli, spawnDaemon } from "./helpers/cli.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { httpUrl, upgradeAttempt, type UpgradeAnswer } from "./helpers/http.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { startUpstreamExecServer, upstreamCodex } from "./helpers/upstream.js";

const TOKEN = "capability-7f3a9c1e5b2d";
/** 64 bytes: long enough for HS512 too, so a wrong algorithm fails on the algorithm alone. */
const SECRET = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const ISSUER = "sandbox-platform";
const AUDIENCE = "execmux-sandbox-42";

const now = () => Math.floor(Date.now() / 1000);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

function jwt(claims: Record<string, unknown>, options: { alg?: string; secret?: string } = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? "HS256", typ: "JWT" }).sign(new TextEncoder().encode(options.secret ?? SECRET));
}

/** Signed by hand: for headers a JWT library would not write. */
function hmacSigned(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const input = `${base64url(header)}.${base64url(claims)}`;
  return `${input}.${createHmac("sha256", SECRET).update(input).digest("base64url")}`;
}

/** The same token with its signature's last character changed in a bit no byte uses (43 characters carry 2 spare bits). */
function withUnusedBitSet(token: string): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  return token.slice(0, -1) + alphabet[alphabet.indexOf(token.at(-1)!) ^ 1]!;
}

/** A token that says `alg: none` and carries no signature. */
const unsigned = (claims: Record<string, unknown>) => `${base64url({ alg: "none", typ: "JWT" })}.${base64url(claims)}.`;

/** Files as a sandbox platform writes them: with a trailing newline, which is not part of the secret. */
function secretFiles(): { tokenFile: string; secretFile: string } {
  const directory = scratchDirectory("ws-auth");
  const tokenFile = join(directory, "token");
  const secretFile = join(directory, "secret");
  writeFileSync(tokenFile, `${TOKEN}\n`);
  writeFileSync(secretFile, `${SECRET}\n`);
  return { tokenFile, secretFile };
}

/** Our daemon and upstream's, started with the same --ws-auth flags. */
async function bothDaemons(flags: string[], overrides: Partial<Config>): Promise<{ ours: string; upstream: string }> {
  const [ours, upstream] = await Promise.all([startTestDaemon(overrides), startUpstreamExecServer(flags)]);
  return { ours: ours.url, upstream: upstream.url };
}

const answer = ({ status, body }: UpgradeAnswer) => ({ status, body });

describe("--ws-auth capability-token", () => {
  it("admits the token from --ws-token-file and refuses others with upstream's status and words", async () => {
    const { tokenFile } = secretFiles();
    const { ours, upstream } = await bothDaemons(["--ws-auth", "capability-token", "--ws-token-file", tokenFile], {
      wsAuth: "capability-token",
      wsTokenFile: tokenFile,
    });
    const attempts: [string, Record<string, string>, { status: number; body: string }][] = [
      ["right token", bearer(TOKEN), { status: 101, body: "" }],
      ["scheme in lower case, spaces around", { authorization: `bearer   ${TOKEN}  ` }, { status: 101, body: "" }],
      ["no header", {}, { status: 401, body: "missing websocket bearer token" }],
      ["wrong token", bearer("capability-guess"), { status: 401, body: "invalid websocket bearer token" }],
      ["another scheme", { authorization: `Basic ${TOKEN}` }, { status: 401, body: "invalid authorization header" }],
      ["Bearer without a token", { authorization: "Bearer" }, { status: 401, body: "invalid authorization header" }],
    ];
    for (const [what, headers, expected] of attempts) {
      const mine = await upgradeAttempt(ours, headers);
      expect(answer(mine), `ours, ${what}`).toEqual(expected);
      expect(answer(await upgradeAttempt(upstream, headers)), `upstream, ${what}`).toEqual(expected);
      if (expected.status === 401) expect(mine.headers["content-type"]).toBe("text/plain; charset=utf-8");
    }
    // Health stays open in both.
    for (const url of [ours, upstream]) expect((await fetch(`${httpUrl(url)}/readyz`)).status).toBe(200);
  });

  it("admits the token whose SHA-256 --ws-token-sha256 names (hex in any case), and the SDK gets in with it", async () => {
    const digest = createHash("sha256").update(TOKEN).digest("hex").toUpperCase();
    const { ours, upstream } = await bothDaemons(["--ws-auth", "capability-token", "--ws-token-sha256", digest], {
      wsAuth: "capability-token",
      wsTokenSha256: digest,
    });
    for (const url of [ours, upstream]) {
      expect((await upgradeAttempt(url, bearer(TOKEN))).status).toBe(101);
      expect(answer(await upgradeAttempt(url, bearer(digest)))).toEqual({ status: 401, body: "invalid websocket bearer token" });
    }
    const client = await connect(ours, { token: TOKEN });
    const handle = await client.start({ argv: ["true"] });
    expect(await handle.wait()).toBe(0);
    client.close();
    await expect(connect(ours, { token: "nope" })).rejects.toThrow(/refused the token \(HTTP 401\)/);
  });
});

describe("--ws-auth signed-bearer-token", () => {
  it("checks HS256 signatures, exp, nbf, iss and aud with the skew, as upstream does", async () => {
    const { secretFile } = secretFiles();
    const { ours, upstream } = await bothDaemons(
      ["--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", secretFile, "--ws-issuer", ISSUER, "--ws-audience", AUDIENCE],
      { wsAuth: "signed-bearer-token", wsSharedSecretFile: secretFile, wsIssuer: ISSUER, wsAudience: AUDIENCE },
    );
    const good = { iss: ISSUER, aud: AUDIENCE, sub: "sandbox-42" };
    const t = now();
    const cases: [string, Promise<string> | string, { status: number; body: string }][] = [
      ["valid", jwt({ ...good, exp: t + 600 }), { status: 101, body: "" }],
      ["aud as a list naming us", jwt({ ...good, aud: ["other", AUDIENCE], exp: t + 600 }), { status: 101, body: "" }],
      ["expired within the default 30 s skew", jwt({ ...good, exp: t - 5 }), { status: 101, body: "" }],
      ["expired", jwt({ ...good, exp: t - 300 }), { status: 401, body: "expired websocket jwt" }],
      ["nbf within the skew", jwt({ ...good, exp: t + 600, nbf: t + 5 }), { status: 101, body: "" }],
      ["nbf in the future", jwt({ ...good, exp: t + 600, nbf: t + 300 }), { status: 401, body: "websocket jwt is not valid yet" }],
      ["no exp", jwt({ ...good }), { status: 401, body: "invalid websocket jwt" }],
      ["exp not an integer", jwt({ ...good, exp: String(t + 600) }), { status: 401, body: "invalid websocket jwt" }],
      ["wrong issuer", jwt({ ...good, iss: "someone-else", exp: t + 600 }), { status: 401, body: "websocket jwt issuer mismatch" }],
      ["no issuer", jwt({ aud: AUDIENCE, exp: t + 600 }), { status: 401, body: "websocket jwt issuer mismatch" }],
      ["wrong audience", jwt({ ...good, aud: "another-sandbox", exp: t + 600 }), { status: 401, body: "websocket jwt audience mismatch" }],
      ["no audience", jwt({ iss: ISSUER, exp: t + 600 }), { status: 401, body: "websocket jwt audience mismatch" }],
      ["another secret", jwt({ ...good, exp: t + 600 }, { secret: "x".repeat(64) }), { status: 401, body: "invalid websocket jwt" }],
      ["the file's newline as part of the secret", jwt({ ...good, exp: t + 600 }, { secret: `${SECRET}\n` }), { status: 401, body: "invalid websocket jwt" }],
      ["alg none", unsigned({ ...good, exp: t + 600 }), { status: 401, body: "invalid websocket jwt" }],
      ["HS512", jwt({ ...good, exp: t + 600 }, { alg: "HS512" }), { status: 401, body: "invalid websocket jwt" }],
      ["not a JWT", "capability-guess", { status: 401, body: "invalid websocket jwt" }],
      // One signature in other spellings (a lenient decoder reads the same bytes): refused, so spellings cannot multiply a token.
      ["the signature padded with =", jwt({ ...good, exp: t + 600 }).then((token) => `${token}=`), { status: 401, body: "invalid websocket jwt" }],
      ["the signature's unused bits set", jwt({ ...good, exp: t + 600 }).then(withUnusedBitSet), { status: 401, body: "invalid websocket jwt" }],
      ["a space inside the signature", jwt({ ...good, exp: t + 600 }).then((token) => `${token.slice(0, -10)} ${token.slice(-10)}`), { status: 401, body: "invalid websocket jwt" }],
    ];
    for (const [what, token, expected] of cases) {
      const headers = bearer(await token);
      expect(answer(await upgradeAttempt(ours, headers)), `ours, ${what}`).toEqual(expected);
      expect(answer(await upgradeAttempt(upstream, headers)), `upstream, ${what}`).toEqual(expected);
    }
    expect(answer(await upgradeAttempt(ours, {}))).toEqual({ status: 401, body: "missing websocket bearer token" });
    for (const url of [ours, upstream]) expect((await fetch(`${httpUrl(url)}/readyz`)).status).toBe(200);

    // Deliberately stricter than upstream, which ignores iat: a token issued in the future is refused.
    const fromTheFuture = bearer(await jwt({ ...good, exp: t + 6000, iat: t + 3000 }));
    expect(answer(await upgradeAttempt(ours, fromTheFuture))).toEqual({ status: 401, body: "websocket jwt was issued in the future" });
    expect((await upgradeAttempt(upstream, fromTheFuture)).status).toBe(101);
    // And than upstream, which ignores crit: an extension the daemon does not know is refused (RFC 7515).
    const critical = bearer(hmacSigned({ alg: "HS256", crit: ["x-unknown"], "x-unknown": true }, { ...good, exp: t + 600 }));
    expect(answer(await upgradeAttempt(ours, critical))).toEqual({ status: 401, body: "invalid websocket jwt" });
    expect((await upgradeAttempt(upstream, critical)).status).toBe(101);
  });

  it("takes --ws-max-clock-skew-seconds for exp and nbf, and any issuer and audience when none is set", async () => {
    const { secretFile } = secretFiles();
    const strict = await startTestDaemon({ wsAuth: "signed-bearer-token", wsSharedSecretFile: secretFile, wsMaxClockSkewSeconds: "0" });
    const lenient = await startTestDaemon({ wsAuth: "signed-bearer-token", wsSharedSecretFile: secretFile, wsMaxClockSkewSeconds: "600" });
    const t = now();
    const recentlyExpired = bearer(await jwt({ exp: t - 5 }));
    const longExpired = bearer(await jwt({ exp: t - 300 }));
    const soonValid = bearer(await jwt({ exp: t + 900, nbf: t + 300, iss: "anyone", aud: ["anything"] }));
    expect(answer(await upgradeAttempt(strict.url, recentlyExpired))).toEqual({ status: 401, body: "expired websocket jwt" });
    expect((await upgradeAttempt(lenient.url, longExpired)).status).toBe(101);
    expect(answer(await upgradeAttempt(strict.url, soonValid))).toEqual({ status: 401, body: "websocket jwt is not valid yet" });
    expect((await upgradeAttempt(lenient.url, soonValid)).status).toBe(101);
  });

  it("keeps /metrics behind the token and lets a signed token read it", async () => {
    const { secretFile } = secretFiles();
    const daemon = await startTestDaemon({ wsAuth: "signed-bearer-token", wsSharedSecretFile: secretFile });
    const base = httpUrl(daemon.url);
    const refused = await fetch(`${base}/metrics`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toBe("missing websocket bearer token");
    expect((await fetch(`${base}/metrics`, { headers: bearer(await jwt({ exp: now() + 60 })) })).status).toBe(200);
  });
});

describe("--ws-auth beside --token", () => {
  it("admits a request that any configured kind of token admits", async () => {
    const { tokenFile } = secretFiles();
    const daemon = await startTestDaemon({ token: "static-token-1", wsAuth: "capability-token", wsTokenFile: tokenFile });
    expect((await upgradeAttempt(daemon.url, bearer("static-token-1"))).status).toBe(101);
    expect((await upgradeAttempt(daemon.url, bearer(TOKEN))).status).toBe(101);
    // The browser's ways to carry a token work for the capability token too.
    expect((await upgradeAttempt(daemon.url, {}, `/?token=${TOKEN}`)).status).toBe(101);
    expect(answer(await upgradeAttempt(daemon.url, bearer("neither")))).toEqual({ status: 401, body: "invalid websocket bearer token" });
  });

  it("counts --ws-auth as authentication for a listener beyond loopback", async () => {
    const digest = createHash("sha256").update(TOKEN).digest("hex");
    const daemon = await spawnDaemon(["--listen", "ws://0.0.0.0:0", "--ws-auth", "capability-token", "--ws-token-sha256", digest]);
    expect(daemon.url).toMatch(/^ws:\/\/0\.0\.0\.0:\d+$/);
    expect(daemon.stderr()).not.toMatch(/INSECURE/);
    daemon.child.kill("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
  });
});

describe("start-up", () => {
  /** The first line upstream prints for the same arguments: `Error: <message>`. */
  async function upstreamRefusal(args: string[]): Promise<string> {
    const home = scratchDirectory("upstream-home");
    const result = spawnSync(upstreamCodex(), ["exec-server", "--listen", "ws://127.0.0.1:0", ...args], {
      env: { ...process.env, HOME: home, CODEX_HOME: join(home, ".codex") },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(result.status, `upstream with ${args.join(" ")}`).not.toBe(0);
    return /^Error: (.*)$/m.exec(result.stderr)?.[1] ?? result.stderr;
  }

  it("refuses every incomplete or wrong --ws-auth setting with upstream's message, and never prints a secret", async () => {
    const directory = scratchDirectory("ws-auth-bad");
    const shortSecret = join(directory, "short");
    const empty = join(directory, "empty");
    writeFileSync(shortSecret, "short-secret-9d2f\n");
    writeFileSync(empty, " \n");
    const settings = [
      ["--ws-auth", "capability-token"],
      ["--ws-auth", "signed-bearer-token"],
      ["--ws-issuer", ISSUER],
      ["--ws-auth", "capability-token", "--ws-token-sha256", "abc"],
      ["--ws-auth", "capability-token", "--ws-token-file", empty, "--ws-token-sha256", "ab".repeat(32)],
      ["--ws-auth", "capability-token", "--ws-token-file", empty, "--ws-audience", AUDIENCE],
      ["--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", shortSecret, "--ws-token-file", empty],
      ["--ws-auth", "capability-token", "--ws-token-file", empty],
      ["--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", shortSecret],
    ];
    for (const args of settings) {
      const ours = await runCli(["serve", "--listen", "ws://127.0.0.1:0", ...args]);
      expect(ours.code, args.join(" ")).toBe(2);
      expect(ours.stdout).toBe("");
      expect(ours.stderr.trim()).toBe(`execmux: ${await upstreamRefusal(args)}`);
      expect(ours.stderr).not.toContain("short-secret-9d2f");
    }
  });

  it("refuses a file it cannot read, and --ws-auth with --listen stdio, as upstream", async () => {
    const missing = join(scratchDirectory("ws-auth-missing"), "absent");
    const unreadable = await runCli(["serve", "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token", "--ws-token-file", missing]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain(`execmux: failed to read websocket auth secret ${missing}: ENOENT`);
    expect(await upstreamRefusal(["--ws-auth", "capability-token", "--ws-token-file", missing])).toMatch(
      new RegExp(`^failed to read websocket auth secret ${missing}: `),
    );

    const digest = createHash("sha256").update(TOKEN).digest("hex");
    const stdio = await runCli(["serve", "--listen", "stdio", "--ws-auth", "capability-token", "--ws-token-sha256", digest], {}, "");
    expect(stdio.code).toBe(2);
    expect(stdio.stdout).toBe("");
    expect(stdio.stderr.trim()).toBe("execmux: WebSocket auth requires a WebSocket listener, not stdio");
  });

  it("never writes a token, a JWT or a secret into a log line", async () => {
    const { tokenFile, secretFile } = secretFiles();
    const capability = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "trace", "--ws-auth", "capability-token", "--ws-token-file", tokenFile]);
    await upgradeAttempt(capability.url, bearer(TOKEN));
    await upgradeAttempt(capability.url, bearer("capability-guess-55"));
    await upgradeAttempt(capability.url, {}, `/?token=${TOKEN}`);
    const signed = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "trace", "--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", secretFile]);
    const token = await jwt({ exp: now() + 60 });
    const expired = await jwt({ exp: now() - 600 });
    await upgradeAttempt(signed.url, bearer(token));
    await upgradeAttempt(signed.url, bearer(expired));
    for (const daemon of [capability, signed]) {
      daemon.child.kill("SIGTERM");
      await daemon.exited;
    }
    const logs = capability.stderr() + signed.stderr();
    expect(logs).toContain("invalid websocket bearer token");
    expect(logs).toContain("expired websocket jwt");
    for (const secret of [TOKEN, "capability-guess-55", SECRET, token, expired, token.split(".")[2]!]) expect(logs).not.toContain(secret);
  });
});
