/**
 * The accepted bearer tokens: `--token`, plus every line of `--token-file`,
 * re-read on demand (SIGHUP) and when the file changes, so tokens can be
 * rotated without a restart. Tokens are kept only as SHA-256 digests and
 * compared in constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync, unwatchFile, watchFile } from "node:fs";
import { Refusal, type Credential } from "./credential.js";

const digest = (token: string) => createHash("sha256").update(token, "utf8").digest();

export class TokenStore {
  private digests: Buffer[] = [];

  constructor(
    private readonly token: string,
    private readonly file: string,
    private readonly onReload: (count: number, error?: Error) => void = () => undefined,
  ) {
    this.reload();
  }

  /** True when at least one token is configured: clients must then present one. */
  get enabled(): boolean {
    return this.digests.length > 0 || this.file !== "";
  }

  /** Re-reads the token file. A file that cannot be read keeps the previous tokens. */
  reload(): void {
    const tokens = this.token ? [this.token] : [];
    if (this.file) {
      try {
        const lines = readFileSync(this.file, "utf8").split(/\r?\n/);
        tokens.push(...lines.map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#")));
      } catch (error) {
        this.onReload(this.digests.length, error as Error);
        return;
      }
    }
    this.digests = tokens.map(digest);
    this.onReload(this.digests.length);
  }

  /** Follows the token file for changes; returns a function that stops. */
  watch(): () => void {
    if (!this.file) return () => undefined;
    const listener = () => this.reload();
    watchFile(this.file, { interval: 1000, persistent: false }, listener);
    return () => unwatchFile(this.file, listener);
  }

  /** As a credential beside upstream's kinds (credential.ts). */
  asCredential(): Credential {
    return { check: (token) => (this.verify(token) ? undefined : Refusal.invalidToken) };
  }

  /** Constant time in the candidate and in which token matches. */
  verify(candidate: string): boolean {
    const candidateDigest = digest(candidate);
    let matched = false;
    for (const known of this.digests) matched = timingSafeEqual(known, candidateDigest) || matched;
    return matched;
  }
}
