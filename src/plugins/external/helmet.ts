/**
 * Security headers, by @fastify/helmet. Every response: nosniff, no Referer leaks, HSTS when configured
 * (HSTS_MAX_AGE, only meaningful behind HTTPS). JSON and empty responses (the API proper) also get a
 * Content-Security-Policy that allows nothing, no framing, and Cache-Control: no-store (plant data and
 * error details are not for shared caches). Other content types (the pages of /docs, the text of /metrics,
 * exports, the event stream) keep the first set only; /docs sets its own policy.
 */
import fastifyHelmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ServiceLimits } from '../../config/service-limits.js';

function isApiResponse(contentType: string): boolean {
  return (
    contentType === '' ||
    contentType.startsWith('application/json') ||
    contentType.startsWith('application/problem+json')
  );
}

/** The API's set; helmet's other defaults are switched off. */
function apiHeaders(limits: ServiceLimits): FastifyHelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] },
    },
    crossOriginEmbedderPolicy: false,
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity:
      limits.hstsMaxAgeSeconds > 0 ? { maxAge: limits.hstsMaxAgeSeconds, includeSubDomains: false } : false,
    xContentTypeOptions: true,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xFrameOptions: { action: 'deny' },
    xPermittedCrossDomainPolicies: false,
    xPoweredBy: false,
    xXssProtection: false,
  };
}

/** Headers for API answers only: the documents of other content types do not get them. */
const API_ONLY = ['content-security-policy', 'x-frame-options'] as const;

export const securityHeaders = fp(
  async (app: FastifyInstance, limits: ServiceLimits) => {
    // One helmet run per request, with the API's set: nearly every answer is one.
    await app.register(fastifyHelmet, { global: true, ...apiHeaders(limits) });
    // The content type is known only when the response is sent. helmet's headers are on Node's response,
    // where any header the route set through the reply wins over them. A callback hook: it runs on every response.
    app.addHook('onSend', (_request, reply, payload, done) => {
      const contentType = reply.getHeader('content-type');
      if (isApiResponse(typeof contentType === 'string' ? contentType : '')) {
        // helmet has no Cache-Control middleware (it dropped nocache in v4).
        if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
      } else {
        for (const name of API_ONLY) reply.raw.removeHeader(name);
      }
      done(null, payload);
    });
  },
  { name: 'security-headers' },
);
