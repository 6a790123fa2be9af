// The live progress line on a terminal: rewritten in place about twice a
// second, cleared before the summary. Off when stderr is not a terminal (a
// log file gets no carriage returns) or with --json.

export class ProgressLine {
  private shown = false;

  constructor(private readonly stream: NodeJS.WriteStream | undefined) {}

  get enabled(): boolean {
    return this.stream?.isTTY === true;
  }

  update(line: string): void {
    if (!this.enabled) return;
    const width = Math.max(20, (this.stream!.columns || 120) - 1);
    this.stream!.write(`\r${line.length > width ? `${line.slice(0, width - 1)}…` : line}\x1b[K`);
    this.shown = true;
  }

  clear(): void {
    if (!this.shown) return;
    this.stream!.write('\r\x1b[K');
    this.shown = false;
  }
}
