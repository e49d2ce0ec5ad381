/**
 * The accepted bearer tokens: `--token`, plus every line of `--token-file`,
 * re-read on demand (SIGHUP) and when the file changes, so tokens can be
 * rotated without a restart. Tokens are compared as SHA-256 digests in
 * constant time; their plain forms are kept only for the log redactor,
 * which masks them wherever they would appear.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync, unwatchFile, watchFile } from "node:fs";
import { tokenForms } from "../log/redact.js";
import { admitted, Refusal, refused, type Credential } from "./credential.js";
import { staticTokenIdentity } from "./identity.js";

const digest = (token: string) => createHash("sha256").update(token, "utf8").digest();

export class TokenStore {
  private digests: Buffer[] = [];
  /** Every accepted token in every encoding it can take in a log line (see log/redact.ts). */
  private redactionForms: string[] = [];

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
    // Longest first: a token that contains another is masked whole.
    this.redactionForms = tokens.flatMap(tokenForms).sort((a, b) => b.length - a.length);
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
    return {
      check: (token) => {
        const matched = this.identify(token);
        return matched ? admitted(staticTokenIdentity(matched)) : refused(Refusal.invalidToken);
      },
    };
  }

  get formsToRedact(): readonly string[] {
    return this.redactionForms;
  }

  /** Constant time in the candidate and in which token matches. */
  verify(candidate: string): boolean {
    return this.identify(candidate) !== undefined;
  }

  /**
   * Which token the candidate is, as its digest (never the token itself):
   * clients with different tokens are different clients. Constant time in
   * the candidate and in which matches.
   */
  identify(candidate: string): Buffer | undefined {
    const candidateDigest = digest(candidate);
    let matched: Buffer | undefined;
    for (const known of this.digests) if (timingSafeEqual(known, candidateDigest)) matched = known;
    return matched;
  }
}
