/**
 * The certificate authorities an https request trusts: Node's bundled roots
 * (plus NODE_EXTRA_CA_CERTS, which Node reads itself), and, as upstream's
 * HTTP clients do, the PEM bundle named by CODEX_CA_CERTIFICATE or else
 * SSL_CERT_FILE, added to them (a corporate TLS-inspecting proxy's CA).
 */
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type { Environment } from "./proxy-route.js";

/** One read per bundle path: it is read on the event loop, and bundles rarely change while the daemon runs. */
const bundles = new Map<string, string[]>();

/** Undefined: Node's defaults. Throws when the named bundle cannot be read (the request then fails to send). */
export function trustedRoots(env: Environment): string[] | undefined {
  const path = env.CODEX_CA_CERTIFICATE?.trim() || env.SSL_CERT_FILE?.trim();
  if (!path) return undefined;
  let roots = bundles.get(path);
  if (!roots) {
    const pem = readFileSync(path, "utf8");
    if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new Error(`${path} holds no PEM certificate`);
    roots = [...rootCertificates, pem];
    bundles.set(path, roots);
  }
  return roots;
}
