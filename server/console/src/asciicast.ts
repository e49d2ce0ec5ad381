/**
 * asciicast v2 (https://docs.asciinema.org/manual/asciicast/v2/): a JSON
 * header line, then one `[seconds, "o", text]` line per output chunk, timed
 * from the first. Text is UTF-8 decoded per stream with a streaming decoder,
 * so a character split across chunks is written whole in the later event
 * and the events' text, encoded again, is the process's bytes. (Bytes that
 * are not UTF-8 cannot be written in a cast: they become U+FFFD.)
 */
export interface CastHeader {
  readonly width: number;
  readonly height: number;
  /** Unix time of the first event, ms. */
  readonly startMs?: number;
  readonly title?: string;
  readonly command?: string;
  readonly env?: Record<string, string>;
}

export class AsciicastWriter {
  private readonly decoders = new Map<string, TextDecoder>();
  private startMs: number | undefined;
  private lastSeconds = 0;

  constructor(private readonly header: CastHeader) {
    this.startMs = header.startMs;
  }

  /** The header line (with its newline). */
  headerLine(): string {
    const { width, height, title, command, env } = this.header;
    const line: Record<string, unknown> = { version: 2, width, height };
    if (this.startMs !== undefined) line.timestamp = Math.floor(this.startMs / 1000);
    if (command) line.command = command;
    if (title) line.title = title;
    if (env) line.env = env;
    return `${JSON.stringify(line)}\n`;
  }

  /** The event line for one output chunk, or "" while its bytes end inside a character. */
  output(timeMs: number, stream: string, bytes: Uint8Array): string {
    let decoder = this.decoders.get(stream);
    if (!decoder) this.decoders.set(stream, (decoder = new TextDecoder("utf-8")));
    return this.line(timeMs, decoder.decode(bytes, { stream: true }));
  }

  /** What the decoders still hold (an incomplete character at the very end), as a last event. */
  end(timeMs: number): string {
    let text = "";
    for (const decoder of this.decoders.values()) text += decoder.decode();
    return this.line(timeMs, text);
  }

  private line(timeMs: number, text: string): string {
    if (text === "") return "";
    this.startMs ??= timeMs;
    // Never backwards: replayers expect times in order.
    const seconds = Math.max(this.lastSeconds, (timeMs - this.startMs) / 1000);
    this.lastSeconds = seconds;
    return `${JSON.stringify([Number(seconds.toFixed(3)), "o", text])}\n`;
  }
}
