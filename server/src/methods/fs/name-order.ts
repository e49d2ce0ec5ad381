/**
 * Upstream sorts a directory's names as Rust compares Strings: by UTF-8
 * bytes. JavaScript compares UTF-16 code units, which agrees everywhere but
 * for characters past U+FFFF (stored as surrogates, 0xD800-0xDFFF), which
 * UTF-8 puts after U+E000-U+FFFF. Shifting the two ranges past each other
 * gives code point order, which is UTF-8 byte order.
 */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}

export function compareByUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a.charCodeAt(index);
    const y = b.charCodeAt(index);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/**
 * Keeps the `keep` smallest names of a stream of them, sorted, in at most
 * twice that much memory: a huge directory is sorted a window at a time.
 */
export class SmallestNames {
  private names: string[] = [];

  constructor(private readonly keep: number) {}

  add(name: string): void {
    this.names.push(name);
    if (this.names.length >= 2 * this.keep) this.trim();
  }

  sorted(): string[] {
    this.trim();
    return this.names;
  }

  private trim(): void {
    this.names.sort(compareByUtf8);
    this.names.length = Math.min(this.names.length, this.keep);
  }
}
