/**
 * The lines logged in one turn of the event loop reach stdout's stream as ONE write.
 *
 * Why: sonic-boom (pino's stdout stream) measures the UTF-8 length of the text it
 * already holds on every write it is given, to cap each write(2) at 16 KiB. Under
 * load, while one write is in flight, every per-request line therefore re-measures
 * (and flattens) the growing buffer: quadratic in the lines of a burst. Handing it
 * one string per turn measures each byte once (its cost: bench/README.md, "Figures behind code comments").
 *
 * Lines wait at most until the end of the current turn (setImmediate), and are
 * moved to the stream before the process exits, so nothing logged is held back
 * any longer than sonic-boom itself would hold it.
 */

/** What this needs of the stream behind it: pino.destination()'s SonicBoom. */
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

  /** Called by pino with one complete line (newline included). */
  write(line: string): boolean {
    this.lines.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.handOver);
    }
    return true;
  }

  /** pino's logger.flush(): hand over what is pending, then let the sink flush. */
  flush(callback?: (error?: Error | null) => void): void {
    this.handOver();
    if (this.sink.flush === undefined) callback?.(null);
    else this.sink.flush(callback);
  }

  /** Synchronously writes everything out (process exit, fatal errors). */
  flushSync(): void {
    this.handOver();
    this.sink.flushSync();
  }

  /** Stops flushing this stream at exit (tests that make many). */
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
