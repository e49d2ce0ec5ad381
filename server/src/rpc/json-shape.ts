/**
 * A pass over a frame's text, before JSON.parse, that refuses what would be
 * expensive to build: nesting past upstream's 128, more than upstream's
 * 262,144 JSON values, or an object of more than 16,384 members. Building
 * objects is what costs (JSON.parse of 100,000 environment names took 150 ms
 * and their validation 70 ms more): counting them costs a tenth of that, and
 * strings, however long, are skipped with one search each.
 *
 * Counts are exact for valid JSON, the same as upstream's as it decodes. Text
 * that is not JSON is left for JSON.parse to report.
 */

export const MAX_DEPTH = 128;
export const MAX_VALUES = 256 * 1024;
/** No request has a use for more (environments are capped at 4,096 names, resume cursors at 16,384). */
export const MAX_OBJECT_MEMBERS = 16 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

const startsScalar = (code: number) =>
  code === 0x2d || (code >= 0x30 && code <= 0x39) || code === 0x74 /* t */ || code === 0x66 /* f */ || code === 0x6e; /* n */
const endsScalar = (code: number) =>
  code === COMMA || code === CLOSE_ARRAY || code === CLOSE_OBJECT || code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/** Finds the next character that is not JSON whitespace (its index is lastIndex - 1). */
const NEXT_SIGNIFICANT = /[^ \t\n\r]/g;

/** The index of the quote that closes the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

export interface ShapeLimits {
  readonly depth: number;
  readonly values: number;
  readonly members: number;
}

export interface Shape {
  /** Values counted so far (all of them when nothing was violated). */
  values: number;
  deepest: number;
  /** The most members one object has. */
  widest: number;
  /** What was exceeded first, in upstream's words where it has them. */
  violation?: string;
}

const UPSTREAM_LIMITS: ShapeLimits = { depth: MAX_DEPTH, values: MAX_VALUES, members: MAX_OBJECT_MEMBERS };

/** What makes the frame too costly to parse; undefined when nothing does. */
export function shapeViolation(text: string): string | undefined {
  // Passing any limit takes more characters than this (the depth limit, the
  // least of them, one bracket per level): a small frame, such as every
  // keystroke's process/write, needs no count.
  if (text.length <= MAX_DEPTH) return undefined;
  return measureJson(text, UPSTREAM_LIMITS).violation;
}

/** Counts values, depth and members of the JSON text, stopping at the first limit passed. */
export function measureJson(text: string, limits: ShapeLimits): Shape {
  const shape: Shape = { values: 0, deepest: 0, widest: 0 };
  const slots = Math.min(limits.depth, MAX_DEPTH * 64) + 2;
  const inObject = new Uint8Array(slots);
  const members = new Uint32Array(slots);
  let depth = 0;
  let values = 0;
  // Inside an object, after `{` or `,`: the next string is a key, not a value.
  let expectKey = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = closingQuote(text, index);
      if (end < 0) break;
      if (!expectKey) values++;
      index = end;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      values++;
      if (++depth > limits.depth || depth >= slots) {
        shape.violation = "recursion limit exceeded";
        break;
      }
      shape.deepest = Math.max(shape.deepest, depth);
      inObject[depth] = code === OPEN_OBJECT ? 1 : 0;
      members[depth] = 0;
      expectKey = code === OPEN_OBJECT;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      if (--depth < 0) break;
      expectKey = false;
    } else if (code === COLON) {
      expectKey = false;
      const count = ++members[depth]!;
      shape.widest = Math.max(shape.widest, count);
      if (count > limits.members) {
        shape.violation = `a JSON object has more than ${limits.members} members`;
        break;
      }
    } else if (code === COMMA) {
      expectKey = inObject[depth] === 1;
    } else if (startsScalar(code)) {
      values++;
      while (index + 1 < text.length && !endsScalar(text.charCodeAt(index + 1))) index++;
    } else {
      // Whitespace (or a stray character JSON.parse will report): a long run
      // of it is skipped in one search, not looked at a character at a time
      // (12 MB of spaces took 200-460 ms that way).
      NEXT_SIGNIFICANT.lastIndex = index + 1;
      if (NEXT_SIGNIFICANT.test(text)) index = NEXT_SIGNIFICANT.lastIndex - 2;
      else break;
      continue;
    }
    if (values > limits.values) {
      shape.violation = `JSON-RPC message exceeds the limit of ${limits.values} JSON values`;
      break;
    }
  }
  shape.values = values;
  return shape;
}
