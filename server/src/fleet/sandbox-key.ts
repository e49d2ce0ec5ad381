/**
 * Per-sandbox keys. A fleet's pods all come from one template, so they can
 * only be given one Kubernetes Secret; but the commands a sandbox runs can
 * read whatever its daemon reads, so a fleet-wide signing secret in every
 * sandbox would let any one of them mint tokens for all the others. Instead
 * an init container derives the sandbox's own key from the fleet secret and
 * its pod's namespace and name (the downward API), and only that key reaches
 * the daemon's container: a sandbox can then mint tokens for itself alone.
 * The platform derives the same key to mint (`execmux token mint --sandbox`).
 *
 * The key is HMAC-SHA256(fleet secret, context), written as 64 hex digits:
 * the text `--ws-shared-secret-file` reads (upstream's signed-bearer-token
 * takes the file's trimmed text as the HMAC key, at least 32 bytes).
 */
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";

/** Upstream's minimum for an HS256 secret, which the fleet secret must meet too. */
export const MIN_SECRET_BYTES = 32;

/** Domain separation: a key made here cannot equal any other HMAC of the same secret. */
const CONTEXT = "execmux/sandbox-key/v1";

/** A Kubernetes name: a DNS-1123 label (the router checks X-Sandbox-ID and the namespace the same way). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export class SecretError extends Error {}

export function checkDnsLabel(what: string, value: string): void {
  if (!DNS_LABEL.test(value)) throw new SecretError(`${what} must be a Kubernetes name (a DNS-1123 label: a-z, 0-9, '-', at most 63), got ${JSON.stringify(value)}`);
}

/** A secret file's text without surrounding whitespace, as the daemon reads it; at least 32 bytes. */
export function readSecretFile(path: string): Buffer {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new SecretError(`cannot read the secret file ${path}: ${(error as Error).message}`);
  }
  const secret = Buffer.from(text.trim(), "utf8");
  if (secret.length < MIN_SECRET_BYTES) throw new SecretError(`the secret in ${path} must be at least ${MIN_SECRET_BYTES} bytes (openssl rand -hex 32 makes one)`);
  return secret;
}

/** The key of sandbox `name` in `namespace`: 64 hex digits. */
export function sandboxKey(fleetSecret: Uint8Array, namespace: string, name: string): string {
  checkDnsLabel("the namespace", namespace);
  checkDnsLabel("the sandbox name", name);
  return createHmac("sha256", fleetSecret).update(`${CONTEXT}\n${namespace}\n${name}`, "utf8").digest("hex");
}
