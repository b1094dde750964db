/**
 * Event tickets: POST /events/tickets gives a short-lived ticket that opens one GET /events stream without the
 * Authorization header (what EventSource needs), as the token that asked for it. Over a real socket.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { EventTickets } from '../../src/events/tickets.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { listen } from '../client/servers.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

async function ticketFor(url: string, token: string): Promise<{ ticket: string; expiresAt: string }> {
  const response = await fetch(`${url}/events/tickets`, { method: 'POST', headers: bearer(token) });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as { ticket: string; expiresAt: string };
}

/** Reads the stream until `text` has arrived, then closes it. */
async function readUntil(response: Response, text: string): Promise<string> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let seen = '';
  const deadline = setTimeout(() => void reader.cancel(), 10_000);
  try {
    while (!seen.includes(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
  } finally {
    clearTimeout(deadline);
    await reader.cancel().catch(() => {});
  }
  return seen;
}

for (const backend of testBackends())
  describe(`event tickets [${backend.name}]`, () => {
    let h: Harness;
    let url: string;
    before(async () => {
      h = await createHarness({ backend, env: { EVENTS_TICKET_TTL_MS: '1000', TOKEN_CACHE_TTL_MS: '0' } });
      url = await listen(h);
    });
    after(() => h.close());

    it('a ticket opens one stream without the Authorization header; a second use is refused', async () => {
      const { ticket, expiresAt } = await ticketFor(url, h.tokens.read);
      assert.match(ticket, /^pet_[A-Za-z0-9_-]{43}$/);
      const ttl = Date.parse(expiresAt) - Date.now();
      assert.ok(ttl > 0 && ttl <= 1000, `expires in ${ttl} ms`);

      const stream = await fetch(`${url}/events?ticket=${ticket}`);
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers.get('content-type')), /^text\/event-stream/);
      const created = await fetch(`${url}/plants`, {
        method: 'POST',
        headers: { ...json, ...bearer(h.tokens.write) },
        body: '{"id": 4242, "name": "ticketed", "tag": "t"}',
      });
      assert.equal(created.status, 200);
      assert.match(await readUntil(stream, '"ticketed"'), /event: plant\.created\ndata: \{"id":4242,"name":"ticketed"/);

      const again = await h.request({ method: 'GET', url: `/events?ticket=${ticket}` });
      assertError(again, Errors.EVENTS_TICKET_INVALID, /used already, expired, or issued by another instance/);
      assert.match(String(again.headers['www-authenticate']), /^Bearer realm="plantstore", error="invalid_token"/);
      assert.ok(!h.logs().includes(ticket.slice(4)), 'the ticket is cut out of the logged URLs');
      assert.match(h.logs(), /"url":"\/events\?ticket=\[redacted\]"/);
    });

    it('an expired ticket is refused; so is one whose token was revoked meanwhile', async () => {
      const { ticket } = await ticketFor(url, h.tokens.read);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assertError(
        await h.request({ method: 'GET', url: `/events?ticket=${ticket}` }),
        Errors.EVENTS_TICKET_INVALID,
        /expired/,
      );

      const { secret } = await issueToken(h.store.tokens, { name: 'soon-revoked', scopes: ['plants:read'] });
      const revokedTicket = await ticketFor(url, secret);
      await h.store.tokens.revokeToken('soon-revoked', new Date());
      assertError(
        await h.request({ method: 'GET', url: `/events?ticket=${revokedTicket.ticket}` }),
        Errors.TOKEN_INVALID,
        /revoked/,
      );
    });

    it('needs a token with plants:read to get one, and a ticket is only for GET /events', async () => {
      assertError(await h.request({ method: 'POST', url: '/events/tickets' }), Errors.TOKEN_MISSING);
      assertError(
        await h.request({ method: 'POST', url: '/events/tickets', headers: bearer(h.tokens.write) }),
        Errors.INSUFFICIENT_SCOPE,
      );
      const { ticket } = await ticketFor(url, h.tokens.all);
      assertError(await h.request({ method: 'GET', url: `/plants?ticket=${ticket}` }), Errors.TOKEN_MISSING);
      assertError(await h.request({ method: 'GET', url: '/events?ticket=pet_nonsense' }), Errors.EVENTS_TICKET_INVALID);
    });
  });

describe('EventTickets', () => {
  it('keeps at most `perToken` unused tickets per token, dropping the oldest', () => {
    const tickets = new EventTickets(60_000, 2);
    const first = tickets.issue('secret-a', 'a');
    const second = tickets.issue('secret-a', 'a');
    const other = tickets.issue('secret-b', 'b');
    const third = tickets.issue('secret-a', 'a');
    assert.ok('refusal' in tickets.redeem(first.ticket));
    assert.deepEqual(tickets.redeem(second.ticket), { secret: 'secret-a' });
    assert.deepEqual(tickets.redeem(third.ticket), { secret: 'secret-a' });
    assert.deepEqual(tickets.redeem(other.ticket), { secret: 'secret-b' });
  });
});
