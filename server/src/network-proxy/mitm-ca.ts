/**
 * The proxy's own certificate authority for credential masking: made on the
 * first start that asks for masking (never at daemon start-up), kept in this
 * daemon's memory only (its key is never written anywhere), and one leaf
 * certificate per host on demand, in a bounded cache. Upstream makes one
 * per exec-server process too. node-forge (pure JavaScript) builds the
 * certificates; Node's own crypto makes the RSA keys and signs them (forge's
 * JavaScript RSA held the event loop 30-50 ms a leaf). Every leaf shares one
 * key pair, made with the CA's: a sandboxed process that connects to many
 * hosts costs a signature each, not a key.
 *
 * A process is told to trust the CA through a bundle file: the system's roots,
 * the executor's own SSL_CERT_FILE (what the proxy trusts itself), and this CA.
 */
import { generateKeyPair, randomBytes, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { promisify } from "node:util";
import forge from "node-forge";

/** Leaf certificates kept at once; past it the least recently used is dropped. */
export const LEAF_CACHE_MAX = 64;
const generate = promisify(generateKeyPair);

interface RsaKey {
  readonly pem: string;
  readonly publicKey: forge.pki.PublicKey;
}

async function rsaKey(): Promise<RsaKey> {
  const { privateKey } = await generate("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { pem: privateKey, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}

/** Signs `certificate` with `signerPem` (SHA-256 with RSA), natively. */
function signCertificate(certificate: forge.pki.Certificate, signerPem: string): void {
  certificate.signatureOid = forge.pki.oids.sha256WithRSAEncryption!;
  certificate.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption!;
  const tbs = Buffer.from(forge.asn1.toDer((forge.pki as unknown as { getTBSCertificate(certificate: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(certificate)).getBytes(), "binary");
  certificate.signature = sign("sha256", tbs, signerPem).toString("binary");
}

function baseCertificate(publicKey: forge.pki.PublicKey, days: number): forge.pki.Certificate {
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = publicKey;
  // A positive serial: the first byte's high bit clear.
  certificate.serialNumber = `0${randomBytes(15).toString("hex")}`;
  certificate.validity.notBefore = new Date(Date.now() - 24 * 3600_000);
  certificate.validity.notAfter = new Date(Date.now() + days * 24 * 3600_000);
  return certificate;
}

export interface Leaf {
  readonly key: string;
  readonly cert: string;
}

export class MitmAuthority {
  private readonly leaves = new Map<string, Promise<Leaf>>();

  private constructor(
    private readonly caKey: RsaKey,
    private readonly caCertificate: forge.pki.Certificate,
    readonly certificatePem: string,
    private readonly leafKey: RsaKey,
  ) {}

  static async create(): Promise<MitmAuthority> {
    const [keys, leafKey] = await Promise.all([rsaKey(), rsaKey()]);
    const certificate = baseCertificate(keys.publicKey, 3650);
    const name = [{ name: "commonName", value: "execmux network proxy CA" }];
    certificate.setSubject(name);
    certificate.setIssuer(name);
    certificate.setExtensions([
      { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
      { name: "subjectKeyIdentifier" },
    ]);
    signCertificate(certificate, keys.pem);
    return new MitmAuthority(keys, certificate, forge.pki.certificateToPem(certificate), leafKey);
  }

  /** The certificate a client sees for `host` (a name or an IP literal), signed by this CA. */
  leafFor(host: string): Promise<Leaf> {
    const cached = this.leaves.get(host);
    if (cached) {
      this.leaves.delete(host);
      this.leaves.set(host, cached);
      return cached;
    }
    const made = this.issue(host);
    this.leaves.set(host, made);
    made.catch(() => this.leaves.delete(host));
    if (this.leaves.size > LEAF_CACHE_MAX) this.leaves.delete(this.leaves.keys().next().value!);
    return made;
  }

  private async issue(host: string): Promise<Leaf> {
    const certificate = baseCertificate(this.leafKey.publicKey, 30);
    certificate.setSubject([{ name: "commonName", value: host.slice(0, 64) }]);
    certificate.setIssuer(this.caCertificate.subject.attributes);
    const ip = /^[0-9.]+$/.test(host) || host.includes(":");
    certificate.setExtensions([
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [ip ? { type: 7, ip: host } : { type: 2, value: host }] },
    ]);
    signCertificate(certificate, this.caKey.pem);
    return { key: this.leafKey.pem, cert: forge.pki.certificateToPem(certificate) };
  }
}

let authority: Promise<MitmAuthority> | undefined;

/** This daemon's CA, made on first use. */
export function mitmAuthority(): Promise<MitmAuthority> {
  authority ??= MitmAuthority.create();
  authority.catch(() => (authority = undefined));
  return authority;
}

/** What the proxy trusts when it connects on to a credentialed host: the system's roots and the executor's SSL_CERT_FILE. */
export function upstreamTrust(): string[] {
  const extra = process.env.SSL_CERT_FILE;
  if (!extra) return [...rootCertificates];
  try {
    return [...rootCertificates, readFileSync(extra, "utf8")];
  } catch {
    return [...rootCertificates];
  }
}

/** The bundle a masked process is told to trust: what the proxy trusts, and this CA. */
export function trustBundle(authorityPem: string): string {
  return [...upstreamTrust(), authorityPem].map((pem) => pem.trim()).join("\n") + "\n";
}
