/**
 * The lines logged in one event-loop turn reach stdout's stream as one write: sonic-boom
 * measures the text it holds on every write, so a line at a time under load is quadratic in
 * the lines of a burst (bench/README.md, "Figures behind code comments").
 */

/** pino.destination()'s SonicBoom, as far as this uses it. */
export interface LineSink {
  write(text: string): boolean;
  flush?(callback?: (error?: Error | null) => void): void;
  flushSync(): void;
}

const pendingAtExit = new Set<TurnBatchedStream>();

process.on('exit', () => {
  for (const stream of pendingAtExit) {
    try {
      stream.flushSync();
    } catch {
      // The sink is already closed or broken (EPIPE): nothing more can be written.
    }
  }
});

export class TurnBatchedStream {
  private lines: string[] = [];
  private scheduled = false;

  constructor(private readonly sink: LineSink) {
    pendingAtExit.add(this);
  }

  write(line: string): boolean {
    this.lines.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.handOver);
    }
    return true;
  }

  flush(callback?: (error?: Error | null) => void): void {
    this.handOver();
    if (this.sink.flush === undefined) callback?.(null);
    else this.sink.flush(callback);
  }

  flushSync(): void {
    this.handOver();
    this.sink.flushSync();
  }

  /** For tests that make many: stops flushing this stream at exit. */
  detach(): void {
    this.handOver();
    pendingAtExit.delete(this);
  }

  private readonly handOver = (): void => {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? (this.lines[0] as string) : this.lines.join('');
    this.lines = [];
    this.sink.write(text);
  };
}
