/**
 * Tickets for GET /events from a browser: EventSource cannot send an Authorization header, and a long-lived
 * token in a URL ends up in histories and logs. A ticket is obtained with the token (POST /events/tickets),
 * opens one stream, and expires within EVENTS_TICKET_TTL_MS whether used or not; a ticket in a log is useless.
 *
 * Kept in this instance's memory (in a multi-worker instance, its primary's: src/cluster): the POST and the GET must
 * reach the same instance (docs/events.md). Each
 * token holds at most `perToken` unused tickets (the oldest is dropped for a new one), so memory stays bounded.
 */
import { randomBytes } from 'node:crypto';

export const TICKET_PREFIX = 'pet_';

interface Held {
  /** The bearer secret the ticket stands for: the stream is authenticated (and re-checked) as that token. */
  readonly secret: string;
  readonly tokenId: string;
  readonly expiresAt: number;
}

export interface IssuedTicket {
  readonly ticket: string;
  readonly expiresAt: Date;
}

export type Redemption = { readonly secret: string } | { readonly refusal: string };

export class EventTickets {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly ttlMs: number,
    private readonly perToken: number,
    private readonly now: () => number = Date.now,
  ) {}

  issue(secret: string, tokenId: string): IssuedTicket {
    this.dropExpired();
    const ofToken = [...this.held].filter(([, held]) => held.tokenId === tokenId);
    for (const [ticket] of ofToken.slice(0, Math.max(0, ofToken.length - this.perToken + 1))) this.held.delete(ticket);
    const ticket = `${TICKET_PREFIX}${randomBytes(32).toString('base64url')}`;
    const expiresAt = this.now() + this.ttlMs;
    this.held.set(ticket, { secret, tokenId, expiresAt });
    return { ticket, expiresAt: new Date(expiresAt) };
  }

  /** The secret a ticket stands for, once: a second use, an unknown or an expired ticket is refused. */
  redeem(ticket: string): Redemption {
    const held = this.held.get(ticket);
    if (held === undefined)
      return { refusal: 'the event ticket is not known: it was used already, expired, or issued by another instance' };
    this.held.delete(ticket);
    if (held.expiresAt <= this.now()) return { refusal: 'the event ticket has expired: get a new one' };
    return { secret: held.secret };
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [ticket, held] of this.held) if (held.expiresAt <= now) this.held.delete(ticket);
  }
}
