/**
 * Logger options: JSON lines for machines (log shippers, journald), pino-pretty
 * for a person watching a terminal. LOG_FORMAT=json|pretty overrides the guess.
 *
 * Credentials never reach the output in either format: no serializer logs
 * request headers, and redaction cuts them out if one ever does. Redaction runs
 * inside pino, before pino-pretty sees the line.
 */
import type { FastifyServerOptions } from 'fastify';
import pino from 'pino';
import type { Config, LogFormat } from './config/index.js';
import { TurnBatchedStream } from './log-stream.js';

/**
 * Log lines waiting for stdout beyond this are dropped rather than buffered: a
 * stdout that stopped draining must not grow the heap until the process dies.
 */
const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024;

const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'authorization',
];

/** Whether to pretty-print, given the configured format and where logs go. */
export function usePrettyLogs(format: LogFormat, destination: NodeJS.WritableStream | undefined): boolean {
  if (format !== 'auto') return format === 'pretty';
  const target = destination ?? process.stdout;
  return (target as NodeJS.WriteStream).isTTY === true;
}

export async function loggerOptions(config: Config, destination: NodeJS.WritableStream | undefined): Promise<FastifyServerOptions['logger']> {
  const base = {
    level: config.logLevel,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (usePrettyLogs(config.logFormat, destination)) {
    // Imported only when used: pino-pretty's resident memory is paid only where it is used.
    const { default: pretty } = await import('pino-pretty');
    // sync: a pretty log is for a person at a terminal; ordering with other
    // output (the bootstrap banner) matters more than throughput there.
    const stream = pretty({
      colorize: destination === undefined ? undefined : false,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      // The per-request line reads as one line: "request POST /plants 200 0.84ms".
      messageFormat: '{msg}{if method} {method} {url} {status} {ms}ms{end}',
      ignore: 'pid,hostname,method,url,status,ms',
      ...(destination === undefined ? {} : { destination }),
    });
    return { ...base, stream };
  }
  if (destination !== undefined) return { ...base, stream: destination };
  // JSON lines to stdout, written asynchronously: lines logged while a write is in
  // flight go out together in the next one, instead of one blocking write(2) per
  // request (bench/README.md, "Figures behind code comments"), and
  // the lines of one event-loop turn reach sonic-boom as one string (log-stream.ts).
  // Everything buffered is flushed when the process exits, SIGTERM included; only a
  // kill -9 can lose the last few lines, and never a stored plant.
  const sink = pino.destination({ dest: 1, sync: false, maxLength: MAX_BUFFERED_LOG_BYTES });
  return { ...base, stream: new TurnBatchedStream(sink) };
}
