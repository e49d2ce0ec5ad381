/**
 * Upstream's `--ws-auth capability-token`: one token, given as a file or as
 * its SHA-256. Only the digest is kept; candidates are compared in constant
 * time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { admitted, Refusal, refused, type Credential, type Verdict } from "./credential.js";
import { capabilityTokenIdentity } from "./identity.js";

const sha256 = (token: string) => createHash("sha256").update(token, "utf8").digest();

export class CapabilityToken implements Credential {
  private readonly identity: string;

  private constructor(private readonly digest: Buffer) {
    this.identity = capabilityTokenIdentity(digest);
  }

  static fromToken(token: string): CapabilityToken {
    return new CapabilityToken(sha256(token));
  }

  static fromDigest(digest: Buffer): CapabilityToken {
    if (digest.length !== 32) throw new RangeError("a SHA-256 digest has 32 bytes");
    return new CapabilityToken(digest);
  }

  check(token: string): Verdict {
    return timingSafeEqual(sha256(token), this.digest) ? admitted(this.identity) : refused(Refusal.invalidToken);
  }
}
