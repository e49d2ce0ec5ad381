/** Environment-policy globs as a pure unit: upstream's meaning, no backtracking, a bounded cost per request. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GlobBudget, GlobBudgetExceeded, globMatcher } from "../server/dist/process/glob.js";

const matches = (pattern: string, name: string) => globMatcher([pattern], new GlobBudget())(name);
/** The meaning to keep: the regular expression the daemon used before (right, but exponential). */
const byRegExp = (pattern: string, name: string) =>
  new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "i").test(name);

describe("globMatcher", () => {
  it("agrees with the regular-expression reading on every small pattern and name", () => {
    const pattern = fc.string({ unit: fc.constantFrom("a", "b", "*", "?", "."), maxLength: 8 });
    const name = fc.string({ unit: fc.constantFrom("a", "A", "b", "."), maxLength: 8 });
    fc.assert(fc.property(pattern, name, (p, n) => matches(p, n) === byRegExp(p, n)), { numRuns: 20_000 });
  });

  it("matches the default excludes and upstream-style patterns case-insensitively", () => {
    expect(matches("*TOKEN*", "github_token")).toBe(true);
    expect(matches("AWS_*", "aws_secret_access_key")).toBe(true);
    expect(matches("PA?H", "PATH")).toBe(true);
    expect(matches("PA?H", "PAH")).toBe(false);
    expect(matches("ab*ba", "aba")).toBe(false);
  });

  it("answers issue #22's backtracking pattern, and longer ones, without exploring alternatives", () => {
    // 212 bytes took 14 s as a regex, each extra `*a` multiplying it; here it is a few hundred steps.
    for (const stars of [106, 120, 128]) {
      const budget = new GlobBudget(10_000);
      expect(globMatcher(["*a".repeat(stars)], budget)(`${"a".repeat(300)}b`)).toBe(false);
    }
  });

  it("stops a request whose patterns would examine more than its budget", () => {
    const budget = new GlobBudget();
    const included = globMatcher(Array.from({ length: 128 }, () => `*${"?".repeat(250)}b`), budget);
    expect(() => {
      for (let index = 0; index < 4096; index++) included(`${"A".repeat(1000)}${index}`);
    }).toThrow(GlobBudgetExceeded);
  });
});
