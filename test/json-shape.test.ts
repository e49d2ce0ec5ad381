/** The pre-parse count of a frame's values, depth and members, as a pure unit: exact on valid JSON, early on costly JSON. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_OBJECT_MEMBERS, MAX_VALUES, measureJson, shapeViolation } from "../server/dist/rpc/json-shape.js";

const unlimited = { depth: 10_000, values: Number.MAX_SAFE_INTEGER, members: Number.MAX_SAFE_INTEGER };

/** The same counts, from the parsed value. */
function reference(value: unknown, depth = 1): { values: number; deepest: number; widest: number } {
  if (typeof value !== "object" || value === null) return { values: 1, deepest: 0, widest: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const own = { values: 1, deepest: depth, widest: Array.isArray(value) ? 0 : children.length };
  for (const child of children) {
    const inner = reference(child, depth + 1);
    own.values += inner.values;
    own.deepest = Math.max(own.deepest, inner.deepest);
    own.widest = Math.max(own.widest, inner.widest);
  }
  return own;
}

describe("measureJson", () => {
  it("counts exactly what JSON.parse would build, whatever the strings hold and however it is spaced", () => {
    const tricky = fc.constantFrom('a"b', "\\", '\\"', "{[,:]}", "\\\\\"", "", "💥", "\u0000");
    const value = fc.jsonValue().chain((base) => fc.tuple(fc.constant(base), fc.array(tricky, { maxLength: 3 })).map(([inner, strings]) => ({ inner, strings, [strings.join("")]: strings })));
    fc.assert(
      fc.property(value, fc.boolean(), (parsed, spaced) => {
        const text = JSON.stringify(parsed, null, spaced ? 2 : undefined);
        const { values, deepest, widest, violation } = measureJson(text, unlimited);
        expect(violation).toBeUndefined();
        expect({ values, deepest, widest }).toEqual(reference(JSON.parse(text)));
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses, before parsing, frames past upstream's depth and value limits and overly wide objects", () => {
    expect(shapeViolation(`{"jsonrpc":${"[".repeat(129)}${"]".repeat(129)}}`)).toBe("recursion limit exceeded");
    expect(shapeViolation(`{"p":[${"0,".repeat(MAX_VALUES)}0]}`)).toBe(`JSON-RPC message exceeds the limit of ${MAX_VALUES} JSON values`);
    const wide = `{${Array.from({ length: MAX_OBJECT_MEMBERS + 1 }, (_, index) => `"k${index}":1`).join(",")}}`;
    expect(shapeViolation(wide)).toBe(`a JSON object has more than ${MAX_OBJECT_MEMBERS} members`);
    // Long strings, even full of brackets, are one value each.
    expect(shapeViolation(JSON.stringify({ chunk: "[{,:".repeat(1_000_000) }))).toBeUndefined();
    expect(shapeViolation(`{"${"\\\\".repeat(1000)}":"${"\\\"".repeat(1000)}"}`)).toBeUndefined();
  });
});
