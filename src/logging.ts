/**
 * Logger options: JSON lines for machines (log shippers, journald), pino-pretty
 * for a person watching a terminal. LOG_FORMAT=json|pretty overrides the guess.
 *
 * Credentials never reach the output in either format: no serializer logs
 * request headers, and redaction cuts them out if one ever does. Redaction runs
 * inside pino, before pino-pretty sees the line.
 */
import type { FastifyServerOptions } from 'fastify';
import pretty from 'pino-pretty';
import type { Config, LogFormat } from './config.js';

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

export function loggerOptions(config: Config, destination: NodeJS.WritableStream | undefined): FastifyServerOptions['logger'] {
  const base = {
    level: config.logLevel,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (usePrettyLogs(config.logFormat, destination)) {
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
  return destination === undefined ? base : { ...base, stream: destination };
}
