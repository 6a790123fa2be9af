// Splits an agent's byte stream into lines (JSON-lines protocols, USAGE
// lines). The bytes are decoded as one UTF-8 text, so a character split
// between two reads stays whole; each read is searched for line ends once, so
// a stream is split in time linear in its size; and a line is held only up to
// `maxLineChars`: what an agent prints without a line end (400 MB of it took
// the runner to 1.9 GB and 0.5 MB/s, re-searching the growing line at every
// read) goes to `overlong` in pieces as it comes, and is never parsed.
import { StringDecoder } from 'node:string_decoder';

/** Longer than any event line an agent CLI writes (a tool result with a file in it is a few MB). */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;

export interface StreamLinesOptions {
  maxLineChars?: number;
  /** The text of a line past `maxLineChars`, in pieces, then '\n' at its end; by default it is dropped. */
  overlong?: (text: string) => void;
}

export class StreamLines {
  private readonly decoder = new StringDecoder('utf8');
  private pending: string[] = [];
  private pendingChars = 0;
  /** The line being read is past the limit: the rest of it goes to `overlong` until its end. */
  private passing = false;
  private readonly maxLineChars: number;
  private readonly overlong: (text: string) => void;

  constructor(
    private readonly onLine: (line: string) => void,
    options: StreamLinesOptions = {},
  ) {
    this.maxLineChars = options.maxLineChars ?? MAX_LINE_CHARS;
    this.overlong = options.overlong ?? (() => {});
  }

  push(chunk: Buffer | string): void {
    this.take(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
  }

  end(): void {
    this.take(this.decoder.end());
    this.lineEnd();
  }

  private take(text: string): void {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      this.add(text.slice(start, nl));
      this.lineEnd();
      start = nl + 1;
    }
    if (start < text.length) this.add(text.slice(start));
  }

  private add(part: string): void {
    if (part.length === 0) return;
    if (this.passing) {
      this.overlong(part);
      return;
    }
    this.pending.push(part);
    this.pendingChars += part.length;
    if (this.pendingChars > this.maxLineChars) {
      this.passing = true;
      this.overlong(this.pending.join(''));
      this.pending = [];
      this.pendingChars = 0;
    }
  }

  private lineEnd(): void {
    if (this.passing) {
      this.passing = false;
      this.overlong('\n');
      return;
    }
    const line = (this.pending.length === 1 ? this.pending[0]! : this.pending.join('')).trim();
    this.pending = [];
    this.pendingChars = 0;
    if (line) this.onLine(line);
  }
}
