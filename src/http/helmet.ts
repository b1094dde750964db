/**
 * Security headers for a JSON API, written by helmet. Every response: nosniff, no
 * Referer leaks, HSTS when configured (HSTS_MAX_AGE, only meaningful behind HTTPS).
 * JSON and empty responses (the API proper) also get a Content-Security-Policy that
 * allows nothing, no framing, and Cache-Control: no-store (plant data and error
 * details are not for shared caches).
 *
 * Which set applies depends on the content type, known only when the response is
 * sent: hence an onSend hook calling one of two helmet middlewares, each built once.
 * Other content types (the HTML, scripts and styles of /docs, the text of /metrics)
 * are left to the routes that serve them. helmet sets headers on Node's response,
 * and any header a route set through Fastify's reply takes precedence over those
 * when the head is written, so a route's own policy is never overwritten.
 */
import type { FastifyInstance } from 'fastify';
import helmet from 'helmet';
import type { ServiceLimits } from '../config/service-limits.js';

function isApiResponse(contentType: string): boolean {
  return contentType === '' || contentType.startsWith('application/json') || contentType.startsWith('application/problem+json');
}

export function registerHelmet(app: FastifyInstance, limits: ServiceLimits): void {
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
  const forEveryResponse = helmet(everyResponse);
  const forApiResponses = helmet({
    ...everyResponse,
    contentSecurityPolicy: { useDefaults: false, directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] } },
    xFrameOptions: { action: 'deny' },
  });

  // Callback style, not async: this runs on every response.
  app.addHook('onSend', (request, reply, payload, done) => {
    const contentType = reply.getHeader('content-type');
    const api = isApiResponse(typeof contentType === 'string' ? contentType : '');
    // helmet has no Cache-Control middleware (it dropped nocache in v4).
    if (api && !reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
    (api ? forApiResponses : forEveryResponse)(request.raw, reply.raw, () => done(null, payload));
  });
}
