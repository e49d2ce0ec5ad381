/**
 * Upstream's `--ws-auth capability-token`: one token, given as a file or as
 * its SHA-256. Only the digest is kept; candidates are compared in constant
 * time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { Refusal, type Credential } from "./credential.js";

const sha256 = (token: string) => createHash("sha256").update(token, "utf8").digest();

export class CapabilityToken implements Credential {
  private constructor(private readonly digest: Buffer) {}

  static fromToken(token: string): CapabilityToken {
    return new CapabilityToken(sha256(token));
  }

  static fromDigest(digest: Buffer): CapabilityToken {
    if (digest.length !== 32) throw new RangeError("a SHA-256 digest has 32 bytes");
    return new CapabilityToken(digest);
  }

  check(token: string): string | undefined {
    return timingSafeEqual(sha256(token), this.digest) ? undefined : Refusal.invalidToken;
  }
}
