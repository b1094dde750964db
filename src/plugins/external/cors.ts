/**
 * CORS: off unless CORS_ORIGINS lists origins. Then exactly those origins may
 * call the API from a browser; any other origin gets no CORS headers at all (its
 * preflight falls through to the 405 or 404 Error record), so the browser blocks
 * it. No credentials mode: the API uses bearer tokens, never cookies.
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Response headers a browser client may read: ids, versions, pagination, counts, limits, challenges. */
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'ETag',
  'Link',
  'X-Total-Count',
  'Preference-Applied',
  'Allow',
  'WWW-Authenticate',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
];

export const corsPolicy = fp(
  async (app: FastifyInstance, { origins }: { origins: readonly string[] }) => {
    if (origins.length === 0) return;
    const allowed = new Set(origins);
    await app.register(cors, {
      origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      // The conditional-request headers and Prefer are what a browser client needs for
      // safe changes (If-Match) and counts (Prefer: count=exact); Last-Event-ID resumes GET /events
      // from a client that reads the stream with fetch (the typed client does).
      allowedHeaders: [
        'Authorization',
        'Content-Type',
        'X-Request-Id',
        'If-Match',
        'If-None-Match',
        'Prefer',
        'Last-Event-ID',
      ],
      exposedHeaders: EXPOSED_HEADERS,
      credentials: false,
      maxAge: 600,
      // A non-CORS OPTIONS request is not "invalid": it gets the usual 405/404 Error record.
      strictPreflight: false,
    });
    // Its OPTIONS route parses and answers like every other.
  },
  { name: 'cors-policy', dependencies: ['json-bodies', 'error-records'] },
);
