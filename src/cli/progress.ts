/**
 * An upload's progress on stderr: on a terminal one line redrawn in place at most
 * ten times a second (a bar, bytes, rate and ETA); elsewhere (a log, a pipe) a
 * plain line every five seconds, so a quick import prints none.
 */

const REDRAW_MS = 100;
const LOG_EVERY_MS = 5000;
const BAR_WIDTH = 16;
const LF = 0x0a;

interface Progress {
  /** A chunk handed to the connection. */
  sent(chunk: Uint8Array): void;
  /** The whole body is sent; the service is checking and committing it. */
  uploaded(): void;
  stop(): void;
}

interface Sent {
  bytes: number;
  /** Lines: plants, give or take a CSV header. */
  lines: number;
  readonly started: number;
  uploadSeconds?: number;
}

const number = (n: number) => Math.round(n).toLocaleString('en-US');
const pad = (n: number) => String(n).padStart(2, '0');

const UNITS = [
  [1e9, 'GB', 2],
  [1e6, 'MB', 1],
  [1e3, 'kB', 1],
] as const;
const unitOf = (bytes: number) => UNITS.find(([scale]) => bytes >= scale) ?? UNITS[2];

/** 1.5 MB, 512.0 kB. */
function size(bytes: number): string {
  const [scale, unit, digits] = unitOf(bytes);
  return `${(bytes / scale).toFixed(digits)} ${unit}`;
}

/** Part of a whole, in the whole's unit: 12.3/27.0 MB. */
function sizes(part: number, whole: number): string {
  const [scale, unit, digits] = unitOf(whole);
  return `${(part / scale).toFixed(digits)}/${(whole / scale).toFixed(digits)} ${unit}`;
}

function duration(seconds: number): string {
  const s = Math.ceil(seconds);
  return s >= 3600
    ? `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`
    : `${Math.floor(s / 60)}:${pad(s % 60)}`;
}

/** On a terminal, a bar and figures short enough for 80 columns; in a log, a sentence. */
function progressLine(sent: Sent, total: number | undefined, terminal: boolean): string {
  const seconds = (performance.now() - sent.started) / 1000;
  const parts: string[] = [];
  if (total !== undefined && total > 0) {
    const fraction = Math.min(sent.bytes / total, 1);
    const filled = Math.round(fraction * BAR_WIDTH);
    if (terminal) parts.push(`[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}]`);
    parts.push(`${Math.floor(fraction * 100)}%`, sizes(sent.bytes, total));
  } else parts.push(`${size(sent.bytes)} sent`);
  if (sent.uploadSeconds !== undefined)
    parts.push(
      `sent in ${sent.uploadSeconds.toFixed(1)} s, committing ${duration(Math.floor(seconds - sent.uploadSeconds))}`,
    );
  // A rate over less than half a second says little.
  else if (seconds >= 0.5) {
    parts.push(`${size(sent.bytes / seconds)}/s`, `${number(sent.lines / seconds)} plants/s`);
    if (total !== undefined && sent.bytes > 0)
      parts.push(`ETA ${duration(Math.max(total - sent.bytes, 0) / (sent.bytes / seconds))}`);
  }
  return terminal ? parts.join('  ') : `importing: ${parts.join(', ')}`;
}

export function progressReporter(total: number | undefined, out: NodeJS.WriteStream = process.stderr): Progress {
  const sent: Sent = { bytes: 0, lines: 0, started: performance.now() };
  const terminal = out.isTTY === true;
  const draw = () => {
    const line = progressLine(sent, total, terminal);
    // Cut to the terminal's width: a line that wrapped could not be redrawn in place.
    if (terminal) out.write(`\r${line.slice(0, Math.max((out.columns || 80) - 1, 20))}\x1b[K`);
    else out.write(`${line}\n`);
  };
  const timer = setInterval(draw, terminal ? REDRAW_MS : LOG_EVERY_MS);
  timer.unref();
  if (terminal) draw();
  let stopped = false;
  return {
    sent(chunk) {
      sent.bytes += chunk.length;
      for (let at = chunk.indexOf(LF); at !== -1; at = chunk.indexOf(LF, at + 1)) sent.lines += 1;
    },
    uploaded() {
      sent.uploadSeconds = (performance.now() - sent.started) / 1000;
      if (terminal) draw();
    },
    stop() {
      clearInterval(timer);
      // The summary (or the error) takes the progress line's place.
      if (terminal && !stopped) out.write('\r\x1b[K');
      stopped = true;
    },
  };
}

/** The chunks of `source` as bytes, each counted as sent. */
export async function* counted(source: AsyncIterable<unknown>, progress: Progress): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    const bytes = chunk instanceof Uint8Array ? chunk : Buffer.from(String(chunk));
    progress.sent(bytes);
    yield bytes;
  }
  progress.uploaded();
}
