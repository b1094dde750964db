/**
 * The HTTP server's own limits, as Fastify options: timeouts (the slowloris
 * defence), the largest request head, and how protocol-level failures and
 * shutdown are answered. Values come from the config (service-limits.ts).
 */
import type { ServerOptions } from 'node:http';
import type { FastifyServerOptions } from 'fastify';
import { clientErrorHandler, frameworkErrorHandler } from './client-errors.js';
import type { ServiceLimits } from '../config/service-limits.js';

/**
 * How often Node checks open connections against the headers and request
 * timeouts. Node's default (30 s) would let a slow client hold a socket for up to
 * 30 s beyond its timeout; a scan per second over the open connections is cheap.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

export type ServerLimitOptions = Pick<
  FastifyServerOptions,
  | 'connectionTimeout'
  | 'keepAliveTimeout'
  | 'requestTimeout'
  | 'clientErrorHandler'
  | 'return503OnClosing'
  | 'trustProxy'
  | 'frameworkErrors'
> & { readonly http: ServerOptions };

export function serverOptions(limits: ServiceLimits): ServerLimitOptions {
  return {
    // Off in Node: request-deadlines.ts applies REQUEST_TIMEOUT_MS, with a rate for long uploads instead.
    requestTimeout: 0,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.connectionTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      maxHeaderSize: limits.maxHeaderSizeBytes,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, limits.headersTimeoutMs),
      // Checked by node-protocol.ts instead, which answers with an Error record.
      requireHostHeader: false,
    },
    clientErrorHandler: clientErrorHandler(limits) as FastifyServerOptions['clientErrorHandler'],
    frameworkErrors: frameworkErrorHandler as FastifyServerOptions['frameworkErrors'],
    // While draining after SIGTERM, Fastify would answer requests arriving on open
    // keep-alive connections with its own 503 body (not an Error record). They are
    // served instead: the store stays open until the last connection ends, and each
    // such response carries Connection: close, so the client reconnects elsewhere.
    return503OnClosing: false,
    // A hop count becomes the equivalent function (Fastify's types take no number).
    trustProxy: typeof limits.trustProxy === 'number' ? trustHops(limits.trustProxy) : limits.trustProxy,
  };
}
