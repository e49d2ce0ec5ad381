/**
 * Turns ajv's verdict on a request's params into the sentence upstream's
 * serde would give (`missing field \`argv\``, `unknown variant \`SIGTERM\`,
 * expected \`interrupt\``), so a Codex user sees the same words from either
 * executor; cases serde words differently say which field and what is wrong.
 */
import type { ErrorObject } from "ajv";

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "sequence";
  switch (typeof value) {
    case "string":
      return `string ${JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value)}`;
    case "number":
      return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
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

const fieldName = (error: ErrorObject) => error.instancePath.split("/").filter(Boolean).pop();

export function paramsErrorMessage(method: string, errors: readonly ErrorObject[] | null | undefined): string {
  const error = errors?.[0];
  if (!error) return `invalid params for ${method}`;
  if (error.keyword === "required") return `missing field \`${String(error.params.missingProperty)}\``;
  // A union of literals fails as one error per branch, then the anyOf itself.
  const union = errors.find((candidate) => candidate.keyword === "anyOf" && variantsOf(candidate.schema) !== undefined);
  if (union && typeof union.data === "string") {
    const variants = variantsOf(union.schema)!;
    return `unknown variant \`${union.data}\`, ${expectedVariants(variants)}`;
  }
  const field = fieldName(error);
  if (error.keyword === "type") {
    return `invalid type: ${describeValue(error.data)}, expected ${EXPECTED[String(error.params.type)] ?? String(error.params.type)}${field ? ` for \`${field}\`` : ""}`;
  }
  return `invalid value${field ? ` for \`${field}\`` : ""}: ${error.message ?? "not accepted"}`;
}
