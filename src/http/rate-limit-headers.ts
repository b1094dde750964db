/**
 * The rate-limit response headers, as the OpenAPI document describes them. The
 * names are the ones src/plugins/external/rate-limit.ts sets (draft-ietf-httpapi-ratelimit-headers).
 */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': {
    description:
      'Requests allowed per minute for this token (for a request without a valid token: for this client address). Sent when rate limiting is on (RATE_LIMIT).',
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current one-minute window.',
    schema: { type: 'integer' },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends and the full budget is back.',
    schema: { type: 'integer' },
  },
  'RateLimit-Policy': {
    description: `The policy, as \`<limit>;w=${RATE_LIMIT_WINDOW_SECONDS}\`.`,
    schema: { type: 'string' },
  },
} as const;

export const RETRY_AFTER_HEADER = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer' },
} as const;
