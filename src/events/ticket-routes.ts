/** POST /events/tickets: a short-lived, single-stream ticket for GET /events, obtained with the token (tickets.ts). */
import type { TypedRoutes } from '../http/type-provider.js';
import { bearerAuth, bearerSecret } from '../tokens/auth.js';
import type { IssuedTicket } from './tickets.js';

const Ticket = {
  type: 'object',
  required: ['ticket', 'expiresAt'],
  additionalProperties: false,
  properties: {
    ticket: { type: 'string', description: 'Pass it as `GET /events?ticket=...`; it opens one stream.' },
    expiresAt: { type: 'string', format: 'date-time', description: 'Unused by then, it is refused.' },
  },
  examples: [{ ticket: 'pet_3q2-7wX0cZ9mN1bV5tY8uI4oP6aS2dF7gH0jK3lQ9eR', expiresAt: '2026-01-01T12:00:30.000Z' }],
} as const;

export function ticketRoutes(
  issue: (secret: string, tokenId: string) => IssuedTicket | Promise<IssuedTicket>,
  ttlMs: number,
): TypedRoutes {
  return async (app) => {
    app.post(
      '/events/tickets',
      {
        schema: {
          operationId: 'createEventTicket',
          summary: 'Get a ticket to open one change stream',
          description:
            'A ticket for a browser\'s `EventSource`, which cannot send an `Authorization` header: `new EventSource("/events?ticket=...")`. ' +
            `It stands for the token that asked for it, opens one stream, and expires ${ttlMs / 1000} s after it was issued ` +
            '(`EVENTS_TICKET_TTL_MS`), used or not, so the long-lived token never goes into a URL. It is valid on the instance that ' +
            'issued it. A used, expired or unknown ticket gets 401 `EVENTS_TICKET_INVALID`; to reconnect, get a new ticket and pass ' +
            'the last event id as `after`. See docs/events.md.',
          tags: ['events'],
          security: bearerAuth('plants:read'),
          response: { 200: { ...Ticket, description: 'The ticket.' } },
        },
      },
      async (request) => {
        const { ticket, expiresAt } = await issue(bearerSecret(request) ?? '', request.token?.id ?? '');
        return { ticket, expiresAt: expiresAt.toISOString() };
      },
    );
  };
}
