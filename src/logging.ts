/**
 * Logger options: JSON lines for machines, pino-pretty for a person at a terminal. Credentials
 * never reach either: no serializer logs request headers, and redaction (inside pino, before
 * pino-pretty) cuts them out if one ever does.
 */
import type { FastifyServerOptions } from 'fastify';
import { hostname } from 'node:os';
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

export function usePrettyLogs(format: LogFormat, destination: NodeJS.WritableStream | undefined): boolean {
  if (format !== 'auto') return format === 'pretty';
  const target = destination ?? process.stdout;
  return (target as NodeJS.WriteStream).isTTY === true;
}

export async function loggerOptions(
  config: Config,
  destination: NodeJS.WritableStream | undefined,
  /** Added to every line (a worker's id); pino's own pid and hostname stay. */
  bindings: Readonly<Record<string, unknown>> = {},
): Promise<FastifyServerOptions['logger']> {
  const base = {
    level: config.logLevel,
    ...(Object.keys(bindings).length === 0 ? {} : { base: { pid: process.pid, hostname: hostname(), ...bindings } }),
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (usePrettyLogs(config.logFormat, destination)) {
    // Imported only when used, so its resident memory is paid only there.
    const { default: pretty } = await import('pino-pretty');
    // Sync: for a person at a terminal, order with other output (the banner) beats throughput.
    const stream = pretty({
      colorize: destination === undefined ? undefined : false,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      messageFormat: '{msg}{if method} {method} {url} {status} {ms}ms{end}',
      ignore: 'pid,hostname,method,url,status,ms',
      ...(destination === undefined ? {} : { destination }),
    });
    return { ...base, stream };
  }
  if (destination !== undefined) return { ...base, stream: destination };
  // Asynchronous, so a request does not wait on a blocking write(2) (bench/README.md, "Figures
  // behind code comments"). What is buffered is flushed at exit; only kill -9 loses the last lines.
  const sink = pino.destination({ dest: 1, sync: false, maxLength: MAX_BUFFERED_LOG_BYTES });
  return { ...base, stream: new TurnBatchedStream(sink) };
}

/** A logger outside any app, as the apps' loggers are made: a multi-worker instance's primary uses it. */
export async function processLogger(config: Config, bindings: Readonly<Record<string, unknown>>): Promise<pino.Logger> {
  const options = await loggerOptions(config, undefined, bindings);
  if (typeof options !== 'object') return pino({ enabled: false });
  const { stream, ...rest } = options;
  return pino(rest, stream ?? process.stdout);
}
