/**
 * Case-insensitive globs with `*` and `?`, as upstream's wildmatch patterns
 * for environment names. Matched without regular expressions: a regex like
 * `^.*a.*a.*a…$` backtracks exponentially (one 212-byte pattern froze the
 * event loop for 14 s).
 *
 * A pattern is cut at its stars into fixed-length segments; the first must
 * start the name, the last must end it, and each one between is taken at
 * its leftmost place after the previous one (leftmost is never worse, so
 * nothing is retried). Segments without `?` are found with the engine's
 * string search, so a match is linear in the name and the pattern. The
 * characters examined are charged to the request's budget, so all of a
 * request's patterns together cost a bounded time whatever they are.
 */

/**
 * Characters one request's matching may examine (each name-against-pattern
 * test also counts TEST_COST for its fixed overhead): about 5 ms of event
 * loop when used up (measured on a loaded 2-core VM), nine times what 13
 * patterns against 200 names cost (0.2 ms).
 */
export const GLOB_STEP_BUDGET = 1 << 19;
const TEST_COST = 16;

export class GlobBudgetExceeded extends Error {
  constructor() {
    super(`matching the environment policy's patterns examined more than ${GLOB_STEP_BUDGET} characters`);
  }
}

/** The characters a request has left to examine; shared by all of its patterns. */
export class GlobBudget {
  constructor(private remaining = GLOB_STEP_BUDGET) {}

  spend(characters: number): void {
    this.remaining -= characters;
    if (this.remaining < 0) throw new GlobBudgetExceeded();
  }
}

const QUESTION = 63; // "?"

interface Segment {
  readonly text: string;
  readonly hasQuestion: boolean;
}

interface CompiledGlob {
  /** The text before the first `*` (all of it when there is none). */
  readonly head: Segment;
  /** Segments between stars, and the one after the last star; undefined without a star. */
  readonly middle: readonly Segment[];
  readonly tail: Segment | undefined;
}

const fold = (text: string) => text.toUpperCase();
const segment = (text: string): Segment => ({ text, hasQuestion: text.includes("?") });

function compile(pattern: string): CompiledGlob {
  const parts = fold(pattern).split("*");
  if (parts.length === 1) return { head: segment(parts[0]!), middle: [], tail: undefined };
  const tail = segment(parts[parts.length - 1]!);
  const middle = parts.slice(1, -1).filter((part) => part !== "").map(segment);
  return { head: segment(parts[0]!), middle, tail };
}

/** Does `seg` match `name` at `at`? (`?` matches any one character.) */
function segmentAt(name: string, seg: Segment, at: number, budget: GlobBudget): boolean {
  const { text } = seg;
  if (at < 0 || at + text.length > name.length) return false;
  budget.spend(text.length);
  if (!seg.hasQuestion) return name.startsWith(text, at);
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code !== QUESTION && code !== name.charCodeAt(at + index)) return false;
  }
  return true;
}

/** The leftmost place at or after `from` where `seg` matches, or -1. */
function findSegment(name: string, seg: Segment, from: number, budget: GlobBudget): number {
  if (!seg.hasQuestion) {
    const found = name.indexOf(seg.text, from);
    budget.spend((found < 0 ? name.length : found + seg.text.length) - from + 1);
    return found;
  }
  for (let at = from; at + seg.text.length <= name.length; at++) {
    if (segmentAt(name, seg, at, budget)) return at;
  }
  return -1;
}

function matches(glob: CompiledGlob, name: string, budget: GlobBudget): boolean {
  const { head, middle, tail } = glob;
  if (tail === undefined) return head.text.length === name.length && segmentAt(name, head, 0, budget);
  // The tail is pinned to the end and must not overlap the head.
  const tailAt = name.length - tail.text.length;
  if (tailAt < head.text.length) return false;
  if (!segmentAt(name, head, 0, budget) || !segmentAt(name, tail, tailAt, budget)) return false;
  let cursor = head.text.length;
  for (const seg of middle) {
    const found = findSegment(name, seg, cursor, budget);
    if (found < 0) return false;
    cursor = found + seg.text.length;
    if (cursor > tailAt) return false;
  }
  return true;
}

/** A predicate: does a name match any of the patterns? */
export function globMatcher(patterns: readonly string[], budget: GlobBudget): (name: string) => boolean {
  const globs = patterns.map(compile);
  budget.spend(patterns.reduce((sum, pattern) => sum + pattern.length, 0));
  return (name: string) => {
    const folded = fold(name);
    budget.spend(folded.length + globs.length * TEST_COST);
    return globs.some((glob) => matches(glob, folded, budget));
  };
}
