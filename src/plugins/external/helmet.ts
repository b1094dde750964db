/**
 * Security headers: nosniff, no Referer, HSTS when configured on every response; JSON and empty responses (the
 * API proper) also get a deny-all CSP, no framing and Cache-Control: no-store. Other content types (/docs,
 * /metrics, exports, the event stream) set what else they need in their routes.
 *
 * helmet's values, written once: @fastify/helmet builds helmet's middleware on every request, a measurable CPU
 * cost (bench/README.md, "Figures behind code comments"). test/security/headers.test.ts pins them against helmet.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ServiceLimits } from '../../config/service-limits.js';

type HeaderList = readonly (readonly [name: string, value: string])[];

export function securityHeaderLists(limits: ServiceLimits): { everyResponse: HeaderList; apiResponses: HeaderList } {
  const everyResponse: HeaderList = [
    ['referrer-policy', 'no-referrer'],
    ...(limits.hstsMaxAgeSeconds > 0
      ? [['strict-transport-security', `max-age=${limits.hstsMaxAgeSeconds}`] as const]
      : []),
    ['x-content-type-options', 'nosniff'],
  ];
  const apiResponses: HeaderList = [
    ['content-security-policy', "default-src 'none';frame-ancestors 'none'"],
    ...everyResponse,
    ['x-frame-options', 'DENY'],
    ['cache-control', 'no-store'],
  ];
  return { everyResponse, apiResponses };
}

function isApiResponse(contentType: unknown): boolean {
  return (
    contentType === undefined ||
    (typeof contentType === 'string' &&
      (contentType.startsWith('application/json') || contentType.startsWith('application/problem+json')))
  );
}

export const securityHeaders = fp(
  async (app: FastifyInstance, limits: ServiceLimits) => {
    const { everyResponse, apiResponses } = securityHeaderLists(limits);
    // The content type is known only when the response is sent; a header the route set itself wins.
    app.addHook('onSend', (_request, reply, payload, done) => {
      for (const [name, value] of isApiResponse(reply.getHeader('content-type')) ? apiResponses : everyResponse) {
        if (!reply.hasHeader(name)) void reply.header(name, value);
      }
      done(null, payload);
    });
  },
  { name: 'security-headers' },
);
