/**
 * Security headers for a JSON API. Every response: nosniff, no Referer leaks,
 * HSTS when configured (HSTS_MAX_AGE, only meaningful behind HTTPS). JSON and
 * empty responses (the API proper) also get a Content-Security-Policy that allows
 * nothing, no framing, and Cache-Control: no-store (plant data and error details
 * are not for shared caches).
 *
 * Other content types (the HTML, scripts and styles of /docs) are left to the
 * routes that serve them: their own onSend hook sets the policy they need, and
 * anything a route set itself is never overwritten here.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceLimits } from '../config/service-limits.js';

export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

function isApiResponse(contentType: string): boolean {
  return contentType === '' || contentType.startsWith('application/json') || contentType.startsWith('application/problem+json');
}

export function registerSecurityHeaders(app: FastifyInstance, limits: ServiceLimits): void {
  const hsts = limits.hstsMaxAgeSeconds > 0 ? `max-age=${limits.hstsMaxAgeSeconds}` : undefined;
  // Callback style, not async: this runs on every response.
  app.addHook('onSend', (_request, reply, payload, done) => {
    void reply.header('x-content-type-options', 'nosniff');
    void reply.header('referrer-policy', 'no-referrer');
    if (hsts !== undefined) void reply.header('strict-transport-security', hsts);
    const contentType = reply.getHeader('content-type');
    if (isApiResponse(typeof contentType === 'string' ? contentType : '')) {
      if (!reply.hasHeader('content-security-policy')) void reply.header('content-security-policy', API_CONTENT_SECURITY_POLICY);
      if (!reply.hasHeader('x-frame-options')) void reply.header('x-frame-options', 'DENY');
      if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
    }
    done(null, payload);
  });
}
