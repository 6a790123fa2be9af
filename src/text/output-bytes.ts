// What a program printed, kept up to a number of bytes and decoded once at
// its end: a character whose bytes came in two reads stays whole, and a
// program that prints without end does not fill memory.

export class OutputBytes {
  private readonly chunks: Buffer[] = [];
  private kept = 0;

  constructor(private readonly maxBytes: number) {}

  /** Keeps what fits of `chunk`. */
  add(chunk: Buffer): void {
    if (this.kept >= this.maxBytes) return;
    const part = chunk.length > this.maxBytes - this.kept ? chunk.subarray(0, this.maxBytes - this.kept) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
