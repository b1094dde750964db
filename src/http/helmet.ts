/**
 * Security headers for a JSON API, as helmet writes them. Every response: nosniff,
 * no Referer leaks, HSTS when configured (HSTS_MAX_AGE, only meaningful behind
 * HTTPS). JSON and empty responses (the API proper) also get a Content-Security-Policy
 * that allows nothing, no framing, and Cache-Control: no-store (plant data and error
 * details are not for shared caches).
 *
 * Which set applies depends on the content type, known only when the response is
 * sent, so an onSend hook applies them. Other content types (the HTML, scripts and
 * styles of /docs, the text of /metrics) are left to the routes that serve them, and
 * a header a route set itself is never overwritten.
 *
 * helmet's middleware sets headers on Node's response; one header set that way makes
 * Node write the whole head through its slower per-header path (setHeader for each
 * of Fastify's headers too), about a microsecond more per response. So each helmet
 * configuration runs once, on a scratch response, and the headers it set are applied
 * through Fastify's reply like any other.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { ServiceLimits } from '../config/service-limits.js';

type HeaderList = readonly (readonly [name: string, value: string])[];

function isApiResponse(contentType: string): boolean {
  return contentType === '' || contentType.startsWith('application/json') || contentType.startsWith('application/problem+json');
}

/** The headers (lower-case names) a helmet configuration sets on a response. */
function headersFrom(options: HelmetOptions): HeaderList {
  const request = new IncomingMessage(new Socket());
  const response = new ServerResponse(request);
  helmet(options)(request, response, (error) => {
    if (error !== undefined) throw error;
  });
  return Object.entries(response.getHeaders()).map(([name, value]) => [name, String(value)] as const);
}

export const securityHeaders = fp(async (app: FastifyInstance, limits: ServiceLimits) => {
  // Only what is listed here: helmet's other defaults are switched off.
  const everyResponse = {
    contentSecurityPolicy: false,
    crossOriginEmbedderPolicy: false,
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: limits.hstsMaxAgeSeconds > 0 ? { maxAge: limits.hstsMaxAgeSeconds, includeSubDomains: false } : false,
    xContentTypeOptions: true,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xFrameOptions: false,
    xPermittedCrossDomainPolicies: false,
    xPoweredBy: false,
    xXssProtection: false,
  } as const;
  const forEveryResponse = headersFrom(everyResponse);
  const forApiResponses: HeaderList = [
    ...headersFrom({
      ...everyResponse,
      contentSecurityPolicy: { useDefaults: false, directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] } },
      xFrameOptions: { action: 'deny' },
    }),
    // helmet has no Cache-Control middleware (it dropped nocache in v4).
    ['cache-control', 'no-store'],
  ];

  // Callback style, not async: this runs on every response.
  app.addHook('onSend', (_request, reply, payload, done) => {
    const contentType = reply.getHeader('content-type');
    for (const [name, value] of isApiResponse(typeof contentType === 'string' ? contentType : '') ? forApiResponses : forEveryResponse) {
      if (!reply.hasHeader(name)) void reply.header(name, value);
    }
    done(null, payload);
  });
}, { name: 'security-headers' });
