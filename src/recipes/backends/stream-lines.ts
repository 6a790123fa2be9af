// Splits a byte stream into lines for JSON-lines protocols.
export class StreamLines {
  private buffer = '';
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer | string): void {
    this.buffer += chunk.toString();
    let nl = this.buffer.indexOf('\n');
    while (nl >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (line) this.onLine(line);
      nl = this.buffer.indexOf('\n');
    }
  }

  end(): void {
    const rest = this.buffer.trim();
    this.buffer = '';
    if (rest) this.onLine(rest);
  }
}
