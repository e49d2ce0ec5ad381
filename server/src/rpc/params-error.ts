/**
 * Turns ajv's verdict on a request's params into the sentence upstream's
 * serde would give (`missing field \`argv\``, `unknown variant \`SIGTERM\`,
 * expected \`interrupt\``, `invalid type: string "1", expected u64`), so a
 * Codex user sees the same words from either executor; cases serde words
 * differently say which field and what is wrong.
 *
 * Upstream's serde_json keeps numbers as written (arbitrary precision): a
 * number where it expects something else is just `number`, and one that does
 * not fit an integer field (negative, fractional, too large) is `invalid number`.
 */
import type { ErrorObject } from "ajv";
import { standardBase64Error } from "../methods/fs/base64.js";

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "sequence";
  switch (typeof value) {
    case "string":
      return `string ${JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value)}`;
    case "number":
      return "number";
    case "boolean":
      return `boolean \`${value}\``;
    case "object":
      return "map";
    default:
      return typeof value;
  }
}

/** The values of an `anyOf` of string constants (TypeBox's Union of Literals), if that is what it is. */
function variantsOf(anyOf: unknown): string[] | undefined {
  if (!Array.isArray(anyOf) || !anyOf.every((branch: { const?: unknown }) => typeof branch.const === "string")) return undefined;
  return anyOf.map((branch: { const: string }) => branch.const);
}

/** JSON Schema type names in serde's words. */
const EXPECTED: Readonly<Record<string, string>> = {
  array: "a sequence",
  object: "a map",
  string: "a string",
  boolean: "a boolean",
  integer: "an integer",
  number: "a number",
  null: "null",
};

/** serde's wording: "expected `a`", "expected `a` or `b`", "expected one of `a`, `b`, `c`". */
function expectedVariants(variants: readonly string[]): string {
  const quoted = variants.map((variant) => `\`${variant}\``);
  if (quoted.length === 0) return "there are no variants";
  if (quoted.length === 1) return `expected ${quoted[0]}`;
  if (quoted.length === 2) return `expected ${quoted[0]} or ${quoted[1]}`;
  return `expected one of ${quoted.join(", ")}`;
}

/**
 * What upstream's serde expects of each method's params as a whole: `unit`
 * for a method without params, else the Rust struct they decode into (absent
 * params are `null` to it, so `invalid type: null, expected struct ReadParams`).
 */
const EXPECTED_PARAMS: Readonly<Record<string, string>> = {
  initialize: "struct InitializeParams",
  "environment/info": "unit",
  "environment/status": "unit",
  "environmentConfig/read": "struct EnvironmentConfigReadParams",
  "process/start": "struct WireExecParams",
  "process/read": "struct ReadParams",
  "process/write": "struct WriteParams",
  "process/signal": "struct SignalParams",
  "process/terminate": "struct TerminateParams",
  "fs/readFile": "struct WireFsReadFileParams",
  "fs/writeFile": "struct WireFsWriteFileParams",
  "fs/createDirectory": "struct WireFsCreateDirectoryParams",
  "fs/getMetadata": "struct WireFsGetMetadataParams",
  "fs/canonicalize": "struct WireFsCanonicalizeParams",
  "fs/readDirectory": "struct WireFsReadDirectoryParams",
  "fs/walk": "struct WireFsWalkParams",
  "fs/remove": "struct WireFsRemoveParams",
  "fs/copy": "struct WireFsCopyParams",
  "fs/open": "struct WireFsOpenParams",
  "fs/readBlock": "struct FsReadBlockParams",
  "fs/close": "struct FsCloseParams",
  "fs/writeBlock": "struct FsWriteBlockParams",
  "fs/watchMissing": "struct FsWatchMissingParams",
  "http/request": "struct HttpRequestParams",
  "capabilityRoots/discoverV1": "struct WireCapabilityRootsDiscoverParams",
  "capabilities/discoverV2": "struct DiscoverV2CapabilitiesRequest",
};

const fieldName = (error: ErrorObject) => error.instancePath.split("/").filter(Boolean).pop();
/** The Rust type a schema declares for serde's words: an integer (`Unsigned`) or a struct (`struct Foo`). */
const serdeTypeOf = (error: ErrorObject) => (error.parentSchema as { serde?: string } | undefined)?.serde;
const rustIntegerOf = (error: ErrorObject) => {
  const serde = serdeTypeOf(error);
  return serde?.startsWith("struct ") ? undefined : serde;
};

export function paramsErrorMessage(method: string, errors: readonly ErrorObject[] | null | undefined, params?: unknown): string {
  const error = errors?.[0];
  if (!error) return `invalid params for ${method}`;
  // Params that are not the struct (or unit) at all: serde says so before it looks at any field.
  const expectedParams = EXPECTED_PARAMS[method];
  const isMap = params !== null && typeof params === "object" && !Array.isArray(params);
  if (expectedParams === "unit" || (expectedParams && !isMap && !Array.isArray(params))) {
    return `invalid type: ${describeValue(params)}, expected ${expectedParams}`;
  }
  if (error.keyword === "required") return `missing field \`${String(error.params.missingProperty)}\``;
  // A union of literals fails as one error per branch, then the anyOf itself.
  const union = errors.find((candidate) => candidate.keyword === "anyOf" && variantsOf(candidate.schema) !== undefined);
  if (union) {
    const variants = variantsOf(union.schema)!;
    if (typeof union.data === "string") return `unknown variant \`${union.data}\`, ${expectedVariants(variants)}`;
    // serde's externally tagged enum: a variant is a string, or a map of one key (the variant) to its content.
    const entries = union.data !== null && typeof union.data === "object" && !Array.isArray(union.data) ? Object.entries(union.data) : undefined;
    if (entries?.length === 1) {
      const [variant, content] = entries[0]!;
      return variants.includes(variant)
        ? `invalid type: ${describeValue(content)}, expected unit`
        : `unknown variant \`${variant}\`, ${expectedVariants(variants)}`;
    }
    if (!entries) return `invalid type: ${describeValue(union.data)}, expected string or map`;
  }
  if (error.keyword === "format" && error.params.format === "standard-base64" && typeof error.data === "string") {
    return standardBase64Error(error.data) ?? "invalid base64";
  }
  const rustInteger = rustIntegerOf(error);
  if (rustInteger && typeof error.data === "number" && (error.keyword === "type" || error.keyword === "minimum" || error.keyword === "maximum")) {
    return "invalid number";
  }
  if (error.keyword === "type") {
    // serde names no field: its message is the value and what it expected.
    return `invalid type: ${describeValue(error.data)}, expected ${serdeTypeOf(error) ?? EXPECTED[String(error.params.type)] ?? String(error.params.type)}`;
  }
  const field = fieldName(error);
  return `invalid value${field ? ` for \`${field}\`` : ""}: ${error.message ?? "not accepted"}`;
}
