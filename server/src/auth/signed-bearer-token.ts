/**
 * Upstream's `--ws-auth signed-bearer-token`: a JWT signed with HMAC-SHA256
 * and a shared secret, so a sandbox platform can mint one token per sandbox
 * without telling the daemon. jose checks the signature and allows HS256
 * only (`alg: none`, other HMACs and any key confusion are refused);
 * jwt-claims.ts judges the claims as upstream does. The client a token
 * proves is its verified issuer, subject and `jti` (identity.ts), so
 * re-minting or re-spelling a token does not make a new client.
 */
import { admitted, Refusal, refused, type Credential, type Verdict } from "./credential.js";
import { jwtIdentity } from "./identity.js";
import { claimsRefusal, parseClaims, type ClaimExpectations } from "./jwt-claims.js";
import { isCanonicalJws } from "./jwt-spelling.js";

export class SignedBearerToken implements Credential {
  constructor(
    private readonly secret: Uint8Array,
    private readonly expected: ClaimExpectations,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async check(token: string): Promise<Verdict> {
    if (!isCanonicalJws(token)) return refused(Refusal.invalidJwt);
    let payload: Uint8Array;
    try {
      // Loaded on the first token: a daemon with no JWT to check never loads it.
      const { compactVerify } = await import("jose");
      ({ payload } = await compactVerify(token, this.secret, { algorithms: ["HS256"] }));
    } catch {
      // Not a JWS, a bad signature, another algorithm: all one answer, as upstream's.
      return refused(Refusal.invalidJwt);
    }
    const claims = parseClaims(payload);
    if (!claims) return refused(Refusal.invalidJwt);
    const refusal = claimsRefusal(claims, this.expected, this.nowSeconds());
    return refusal ? refused(refusal) : admitted(jwtIdentity(claims));
  }
}
