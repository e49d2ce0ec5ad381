/**
 * What makes two servers' replies differ without meaning anything: ids they
 * generate, peers, pids, clocks, each server's own scratch directory, facts
 * about the host, and where output happened to be split into chunks. Applied
 * to both transcripts of a differential case before they are compared.
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";

export interface NormalizeContext {
  /** This server's scratch directory for the case: shown as `<scratch>`. */
  readonly scratch: string;
  /** The loopback HTTP target's origin (`http://127.0.0.1:PORT`): shown as `<http>`. */
  readonly httpOrigin?: string;
  /** environmentInfo (what the host offers) becomes `<environmentInfo>`, for cases about something else. */
  readonly collapseEnvironmentInfo: boolean;
  /** The same UUID maps to the same `<uuid-N>` throughout one transcript. */
  readonly uuids: Map<string, string>;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const PEER = /(?:127\.0\.0\.1|\[::1\]|localhost):\d+/g;
const BASE64_KEYS = new Set(["chunk", "dataBase64", "bodyBase64", "deltaBase64"]);
/** environmentInfo fields that describe this host and this build, not the protocol. */
const HOST_FIELDS = ["cwd", "userHomeDir", "tempDir", "temporaryDirectories", "prependPathDirs", "providerId", "executorVersion"];

export function normalize(value: unknown, context: NormalizeContext): unknown {
  const replacements = pathReplacements(context);
  const visit = (node: unknown, key?: string): unknown => {
    // network/policyDecision's clock reading, an RFC 3339 string.
    if (typeof node === "string" && key === "timestamp") return "<time>";
    if (typeof node === "string") return normalizeString(BASE64_KEYS.has(key ?? "") ? decodeBase64(node) : node, replacements, context);
    if (typeof node === "number") return normalizeNumber(node, key);
    if (Array.isArray(node)) return sortedIfEntries(withoutConnectionHeaders(node, key).map((item) => visit(item)), key);
    if (node === null || typeof node !== "object") return node;
    const object = node as Record<string, unknown>;
    if (isEnvironmentInfo(object) && context.collapseEnvironmentInfo) return "<environmentInfo>";
    const result: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(object)) result[name] = visit(child, name);
    if (isEnvironmentInfo(object)) for (const field of HOST_FIELDS) if (field in result) result[field] = "<host>";
    if (isDateHeader(object)) result["value"] = "<time>";
    return result;
  };
  return visit(value);
}

/** Past this, a payload is shown by its size, hash and start: a diff of megabytes helps nobody. */
const SHOWN_PAYLOAD_CHARS = 2_000;

/** Base64 payloads are compared as text (readable diffs); non-canonical base64 or binary stays as sent. */
function decodeBase64(text: string): string {
  const bytes = Buffer.from(text, "base64");
  if (bytes.toString("base64") !== text) return text;
  const decoded = bytes.toString("utf8");
  if (!Buffer.from(decoded, "utf8").equals(bytes)) return text;
  if (decoded.length <= SHOWN_PAYLOAD_CHARS) return `text:${decoded}`;
  const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  return `text(${bytes.length} bytes, sha256 ${hash}):${decoded.slice(0, 80)}…`;
}

function pathReplacements({ scratch, httpOrigin }: NormalizeContext): [string, string][] {
  const pairs: [string, string][] = [];
  if (httpOrigin) pairs.push([httpOrigin, "<http>"], [httpOrigin.replace(/^http:\/\//, ""), "<http-host>"]);
  // Longest first: a resolved symlink path may contain the plain one.
  for (const path of new Set([realpathSync(scratch), scratch].sort((a, b) => b.length - a.length))) pairs.push([path, "<scratch>"]);
  return pairs;
}

function normalizeString(text: string, replacements: [string, string][], { uuids }: NormalizeContext): string {
  let result = text;
  for (const [from, to] of replacements) result = result.split(from).join(to);
  result = result.replace(PEER, "<peer>");
  return result.replace(UUID, (uuid) => {
    const known = uuids.get(uuid.toLowerCase());
    if (known) return known;
    const name = `<uuid-${uuids.size + 1}>`;
    uuids.set(uuid.toLowerCase(), name);
    return name;
  });
}

function normalizeNumber(value: number, key: string | undefined): unknown {
  if (key === "pid") return "<pid>";
  // 0 means "unknown" upstream; any real clock reading is as good as another.
  if (key !== undefined && /AtMs$|^timestamp$/.test(key) && value > 0) return "<time>";
  return value;
}

/** fs/readDirectory's order is the host's; compared sorted by name. */
function sortedIfEntries(items: unknown[], key: string | undefined): unknown[] {
  if (key !== "entries" || !items.every((item) => typeof (item as { fileName?: unknown })?.fileName === "string")) return items;
  return [...items].sort((a, b) => String((a as { fileName: string }).fileName).localeCompare((b as { fileName: string }).fileName));
}

/**
 * Response headers about the connection the target server kept with each
 * client (`connection`, `keep-alive`): the server answers what the client's
 * connection handling asked for (reqwest pools and gets `keep-alive`;
 * execmux sends `connection: close`, one connection per request, a
 * difference the README lists), so they describe the client-server pair, not
 * what the executor reports. Every other header, in order, is still compared;
 * `date` is a clock reading (see isDateHeader).
 */
const CONNECTION_HEADERS = new Set(["connection", "keep-alive"]);

function withoutConnectionHeaders(items: unknown[], key: string | undefined): unknown[] {
  if (key !== "headers") return items;
  return items.filter((item) => {
    const name = (item as { name?: unknown } | null)?.name;
    return !(typeof name === "string" && CONNECTION_HEADERS.has(name.toLowerCase()) && "value" in (item as object));
  });
}

function isEnvironmentInfo(object: Record<string, unknown>): boolean {
  return "shell" in object && "capabilities" in object;
}

function isDateHeader(object: Record<string, unknown>): boolean {
  return typeof object["name"] === "string" && object["name"].toLowerCase() === "date" && "value" in object;
}

interface OutputChunk {
  seq?: unknown;
  stream?: unknown;
  chunk?: unknown;
}

/**
 * Output split into chunks the way reads happened to return it: consecutive
 * chunks of one stream become one (still base64), and their seqs are
 * replaced by whether they increase (exited and closed take seqs between
 * them too). Order across streams is kept.
 */
export function mergeChunks(chunks: OutputChunk[]): { merged: { stream: unknown; chunk: string }[]; seqs: string } {
  const runs: { stream: unknown; bytes: Buffer[] }[] = [];
  for (const chunk of chunks) {
    const bytes = Buffer.from(String(chunk.chunk), "base64");
    const last = runs.at(-1);
    if (last && last.stream === chunk.stream) last.bytes.push(bytes);
    else runs.push({ stream: chunk.stream, bytes: [bytes] });
  }
  const merged = runs.map(({ stream, bytes }) => ({ stream, chunk: Buffer.concat(bytes).toString("base64") }));
  const seqs = chunks.map((chunk) => chunk.seq as number);
  const increasing = seqs.every((seq, index) => index === 0 || seq > seqs[index - 1]!);
  return { merged, seqs: increasing ? "increasing" : `not increasing: ${seqs.join(",")}` };
}

/** `contiguous` when each seq is the previous one plus 1, else the seqs themselves. */
export function describeSeqs(seqs: unknown[]): string {
  const contiguous = seqs.every((seq, index) => index === 0 || seq === (seqs[index - 1] as number) + 1);
  return contiguous ? "contiguous" : `not contiguous: ${seqs.join(",")}`;
}
