/**
 * Quotas count identities, not spellings or addresses (issue #34, items 2
 * and 3). One client (Mallory) comes from 200 loopback addresses, or with
 * 200 spellings of one JWT, or with 200 tokens minted for the same subject;
 * another (Alice) has detached sessions she means to resume. Whatever
 * Mallory does, Alice's sessions stay and Alice can still start a new one.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SignJWT } from "jose";
import type WebSocket from "ws";
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "./helpers/daemon.js";
import { handshake } from "./helpers/http.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

const SECRET = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const ATTEMPTS = 200;
/** Small caps, so 200 attempts are far past each of them. */
const QUOTAS = { maxSessions: 64, maxSessionsPerClient: 48, maxDetachedSessions: 32, maxConnectionsPerClient: 300 } as const;

const now = () => Math.floor(Date.now() / 1000);

function jwt(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ exp: now() + 600, ...claims }).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(new TextEncoder().encode(SECRET));
}

/** How Mallory connects on her attempt number `index`: a token and ws's options. */
type Attempt = (index: number) => { token: string; options?: WebSocket.ClientOptions };

const closeAndWait = async (client: WireClient) => {
  client.close();
  await client.closed;
};

/**
 * Alice detaches two sessions; Mallory opens and drops a session 200 times,
 * then holds 100 sessions open; Alice then resumes both of hers and starts a
 * third. Returns how many of Mallory's connections were refused at the door.
 */
async function malloryCannotHurtAlice(url: string, alice: string, mallory: Attempt): Promise<number> {
  const aliceSessions: string[] = [];
  for (let index = 0; index < 2; index++) {
    const client = await WireClient.ready(url, alice);
    aliceSessions.push(String(client.messages[0]!.result!.sessionId));
    await closeAndWait(client);
  }

  let refusedAtTheDoor = 0;
  const tryConnect = async (index: number) => {
    const { token, options } = mallory(index);
    try {
      return await WireClient.connect(url, token, options);
    } catch {
      refusedAtTheDoor++;
      return undefined;
    }
  };
  // Churn: each attempt leaves a detached session behind.
  for (let index = 0; index < ATTEMPTS; index++) {
    const client = await tryConnect(index);
    if (!client) continue;
    await client.request("initialize", { clientName: "mallory" });
    await closeAndWait(client);
  }
  // Hold: as many attached sessions as she can get.
  const held: WireClient[] = [];
  for (let index = 0; index < ATTEMPTS / 2; index++) {
    const client = await tryConnect(index);
    if (!client) continue;
    held.push(client);
    await client.request("initialize", { clientName: "mallory" });
  }

  for (const sessionId of aliceSessions) {
    const resumed = await WireClient.connect(url, alice);
    const reply = await resumed.request("initialize", { clientName: "alice", resumeSessionId: sessionId });
    expect(reply.error).toBeUndefined();
    expect(reply.result?.sessionId).toBe(sessionId);
  }
  const fresh = await WireClient.connect(url, alice);
  const reply = await fresh.request("initialize", { clientName: "alice" });
  expect(reply.error).toBeUndefined();
  for (const client of held) client.close();
  return refusedAtTheDoor;
}

describe("one client from many addresses", () => {
  it("is one client: 200 loopback source addresses cannot expire another client's sessions or lock it out", async () => {
    const tokenFile = join(scratchDirectory("identity"), "tokens");
    writeFileSync(tokenFile, "alice-token-0001\nmallory-token-0002\n");
    const daemon = await startTestDaemon({ ...QUOTAS, tokenFile });
    // 127.0.1.0 - 127.0.1.199: any address of 127.0.0.0/8 reaches a loopback listener.
    const refused = await malloryCannotHurtAlice(daemon.url, "alice-token-0001", (index) => ({
      token: "mallory-token-0002",
      options: { localAddress: `127.0.1.${index}` },
    }));
    expect(refused).toBe(0);
  });
});

describe("a client opening connections fast", () => {
  it("is slowed, not refused, past its pace of new connections, and another client is not slowed with it", async () => {
    const tokenFile = join(scratchDirectory("identity-pace"), "tokens");
    writeFileSync(tokenFile, "alice-token-0001\nmallory-token-0002\n");
    // Two a second, in bursts of two: Mallory's third and fourth wait about half a second and a second for their slots.
    const daemon = await startTestDaemon({ tokenFile, maxNewConnectionsPerSecond: 2 });
    const opened: string[] = [];
    const mallory = Array.from({ length: 4 }, (_, index) =>
      WireClient.connect(daemon.url, "mallory-token-0002").then((client) => (opened.push(`mallory-${index}`), client)),
    );
    await Promise.race(mallory.slice(0, 2));
    const alice = await WireClient.connect(daemon.url, "alice-token-0001");
    opened.push("alice");
    // Alice's own pace let her in at once: only Mallory's burst of two came before her, the others wait for their slots.
    expect(opened.indexOf("alice")).toBeLessThanOrEqual(2);
    // Every one of Mallory's is upgraded in the end: none was refused.
    const clients = await Promise.all(mallory);
    expect(opened).toHaveLength(5);
    for (const client of [...clients, alice]) client.close();
  });
});

describe("one JWT in many forms", () => {
  async function jwtDaemon() {
    const secretFile = join(scratchDirectory("identity-jwt"), "secret");
    writeFileSync(secretFile, `${SECRET}\n`);
    return startTestDaemon({ ...QUOTAS, wsAuth: "signed-bearer-token", wsSharedSecretFile: secretFile });
  }

  /**
   * Spellings of one signature that a lenient base64url decoder (atob)
   * reads as the same bytes: the four values of the last character's unused
   * bits, `=` padding, and a space anywhere inside.
   */
  function spellings(token: string): string[] {
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // An HS256 signature is 32 bytes: 43 characters, the last carrying 2 unused bits.
    const last = alphabet.indexOf(signature.at(-1)!) & ~0b11;
    const forms: string[] = [];
    for (const unused of [0, 1, 2, 3]) {
      for (const padding of ["", "="]) {
        for (let space = 0; space < signature.length; space++) {
          const body = signature.slice(0, -1) + alphabet[last | unused]! + padding;
          const spelled = space === 0 ? body : `${body.slice(0, space)} ${body.slice(space)}`;
          if (spelled !== signature) forms.push(`${header}.${payload}.${spelled}`);
        }
      }
    }
    return forms.slice(0, ATTEMPTS);
  }

  it("refuses every spelling but the canonical one, so 200 spellings cannot expire another client's sessions or lock it out", async () => {
    const daemon = await jwtDaemon();
    const alice = await jwt({ iss: "platform", sub: "alice" });
    const mallory = await jwt({ iss: "platform", sub: "mallory" });
    const forms = spellings(mallory);
    expect(new Set(forms).size).toBe(ATTEMPTS);
    const refused = await malloryCannotHurtAlice(daemon.url, alice, (index) => ({ token: forms[index]! }));
    // Churn and hold: every attempt refused at the door with upstream's words.
    expect(refused).toBe(ATTEMPTS + ATTEMPTS / 2);
    const answer = await handshake(daemon.url, { headers: { authorization: `Bearer ${forms[0]!}` } });
    expect(answer.status).toBe(401);
    expect((await handshake(daemon.url, { headers: { authorization: `Bearer ${mallory}` } })).status).toBe(101);
  });

  it("counts 200 tokens minted for one issuer and subject as one client", async () => {
    const daemon = await jwtDaemon();
    const alice = await jwt({ iss: "platform", sub: "alice" });
    // Each token is different (its exp), each proves the same subject.
    const minted = await Promise.all(Array.from({ length: ATTEMPTS }, (_, index) => jwt({ iss: "platform", sub: "mallory", exp: now() + 600 + index })));
    expect(await malloryCannotHurtAlice(daemon.url, alice, (index) => ({ token: minted[index]! }))).toBe(0);
  });
});
