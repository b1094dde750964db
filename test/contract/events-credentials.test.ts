/**
 * GET /events takes a bearer token or a ticket: the document says so as two security alternatives and an optional
 * `ticket` parameter (no parameter is required), and the service agrees: each alternative alone opens the stream,
 * both together too, neither gets 401 with its challenge; on both stores, over a real socket.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listen } from '../client/servers.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

for (const backend of testBackends()) {
  describe(`GET /events: the document's credential alternatives are the service's (${backend.name})`, () => {
    let h: Harness;
    let url: string;
    let operation: Json;
    before(async () => {
      h = await createHarness({ backend });
      operation = (await h.request({ method: 'GET', url: '/openapi.json' })).json().paths['/events'].get;
      url = await listen(h);
    });
    after(() => h.close());

    /** Opens the stream and closes it once the answer's head is in: its status, and the challenge of a refusal. */
    async function open(
      query: string,
      headers: Record<string, string>,
    ): Promise<{ status: number; challenge: string }> {
      const abort = new AbortController();
      const response = await fetch(`${url}/events${query}`, { headers, signal: abort.signal });
      const challenge = response.headers.get('www-authenticate') ?? '';
      if (response.status === 200) assert.match(String(response.headers.get('content-type')), /^text\/event-stream/);
      abort.abort();
      await response.body?.cancel().catch(() => {});
      return { status: response.status, challenge };
    }

    async function ticket(): Promise<string> {
      const issued = await h.request({ method: 'POST', url: '/events/tickets', headers: bearer(h.tokens.read) });
      assert.equal(issued.statusCode, 200, issued.body);
      return (issued.json() as { ticket: string }).ticket;
    }

    it('the document: a bearer token (plants:read) or a ticket, and the ticket an optional parameter', () => {
      assert.deepEqual(operation.security, [{ bearerAuth: ['plants:read'] }, { eventTicket: [] }]);
      const parameters: Json[] = operation.parameters;
      assert.deepEqual(
        parameters.filter((p) => p.required === true).map((p) => p.name),
        [],
      );
      const ticketParameter = parameters.find((p) => p.in === 'query' && p.name === 'ticket');
      assert.ok(ticketParameter !== undefined, 'ticket is a documented query parameter');
      assert.equal(ticketParameter.required, false);
      assert.match(ticketParameter.description, /needed only without/);
      assert.equal(ticketParameter.schema.type, 'string');
    });

    it('the service: each alternative alone opens the stream, both too; neither is a 401 with a Bearer challenge', async () => {
      assert.equal((await open('', bearer(h.tokens.read))).status, 200, 'a bearer token and no ticket');
      assert.equal((await open(`?ticket=${await ticket()}`, {})).status, 200, 'a ticket and no Authorization');
      assert.equal((await open(`?ticket=${await ticket()}`, bearer(h.tokens.read))).status, 200, 'both');
      const neither = await open('', {});
      assert.equal(neither.status, 401);
      assert.match(neither.challenge, /^Bearer /);
    });
  });
}
