/**
 * The change stream's body as the document describes it: `x-itemSchema` (OpenAPI 3.2's `itemSchema`) on GET /events'
 * text/event-stream, one alternative per kind of message, and every message a real stream sends matching exactly
 * one of them, its `data` matching that alternative's `contentSchema`, on both stores.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { EVENT_TYPES } from '../../src/domain/events.js';
import { listen } from '../client/servers.js';
import { testBackends } from '../support/backends.js';
import { createHarness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

/** The messages of an event-stream text: fields by name (comments dropped), as the HTML standard parses them. */
function messagesOf(text: string): Record<string, string | number>[] {
  return text
    .split('\n\n')
    .slice(0, -1)
    .map((block) => {
      const fields: Record<string, string | number> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':') || line === '') continue;
        const colon = line.indexOf(':');
        const name = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        fields[name] = name === 'retry' ? Number(value) : value;
      }
      return fields;
    })
    .filter((fields) => Object.keys(fields).length > 0);
}

const KINDS = [...EVENT_TYPES, 'stream.overflow', 'stream.shutdown', 'stream.unauthorized', 'position', 'retry'];

for (const backend of testBackends()) {
  describe(`GET /events: the document's item schema is what the stream sends (${backend.name})`, () => {
    it('describes one message per kind, and each message sent matches exactly one, data included', async () => {
      const h = await createHarness({ backend, env: { EVENTS_HEARTBEAT_MS: '100' } });
      let closed = false;
      try {
        const doc: Json = (await h.request({ method: 'GET', url: '/openapi.json' })).json();
        const media = doc.paths['/events'].get.responses['200'].content['text/event-stream'];
        const item: Json = media['x-itemSchema'];
        assert.ok(item !== undefined, 'text/event-stream has an x-itemSchema');
        const branches: Json[] = item.oneOf;
        assert.deepEqual(branches.map((branch) => branch.title).sort(), [...KINDS].sort());

        // Refs point into the document's components; the document is the root they resolve in.
        const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
        const root = { components: doc.components };
        ajv.addSchema(root, 'doc');
        const at = (schema: Json) =>
          JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
        const message = ajv.compile(at(item));
        const kinds = branches.map((branch) => ({
          title: String(branch.title),
          matches: ajv.compile(at({ ...branch, properties: { ...item.properties, ...branch.properties } })),
          data:
            branch.properties?.data?.contentSchema === undefined
              ? undefined
              : ajv.compile(at(branch.properties.data.contentSchema)),
        }));

        const url = await listen(h);
        const write = (method: string, path: string, body?: string) =>
          fetch(`${url}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${h.tokens.write}`,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            body,
          });
        const stream = await fetch(`${url}/events?tag=green&types=${EVENT_TYPES.join(',')}`, {
          headers: { authorization: `Bearer ${h.tokens.read}` },
        });
        assert.equal(stream.status, 200);
        let text = '';
        const reading = (async () => {
          const decoder = new TextDecoder();
          for await (const chunk of stream.body ?? []) text += decoder.decode(chunk, { stream: true });
        })();
        await waitFor('the stream started', () => text.includes('retry:'));
        await write('POST', '/plants', '{"id": 1, "name": "Fern", "tag": "green"}');
        await write('POST', '/plants', '{"id": 2, "name": "Rose", "tag": "red"}'); // filtered out: an id alone follows
        await write('PATCH', '/plants/1', '{"name": "Fern 2"}');
        await write('PATCH', '/plants/1', '{"tag": "red"}'); // leaves the tag: previousTag
        await write('POST', '/plants', '{"id": 3, "name": "Moss", "tag": "green"}');
        await write('DELETE', '/plants/3');
        await write('POST', '/plants', '{"id": 4, "name": "Palm", "tag": "red"}');
        await waitFor('the deletion and a position after it', () => {
          const sent = messagesOf(text);
          const deleted = sent.findIndex((m) => m.event === 'plant.deleted');
          return deleted >= 0 && sent.slice(deleted + 1).some((m) => m.id !== undefined && m.event === undefined);
        });
        await h.close(); // ends the stream with stream.shutdown
        closed = true;
        await reading;

        const seen = new Set<string>();
        for (const sent of messagesOf(text)) {
          const what = JSON.stringify(sent);
          assert.ok(message(sent), `${what}: ${ajv.errorsText(message.errors)}`);
          const matching = kinds.filter((kind) => kind.matches(sent));
          assert.equal(matching.length, 1, `${what} matches ${matching.map((kind) => kind.title).join(', ')}`);
          const [kind] = matching as [(typeof kinds)[number]];
          seen.add(kind.title);
          if (kind.data !== undefined) {
            const data: unknown = JSON.parse(String(sent.data));
            assert.ok(kind.data(data), `${what} data: ${ajv.errorsText(kind.data.errors)}`);
          }
        }
        for (const kind of ['retry', 'position', 'plant.created', 'plant.updated', 'plant.deleted', 'stream.shutdown'])
          assert.ok(seen.has(kind), `a ${kind} message was sent and checked (seen: ${[...seen].join(', ')})`);
        assert.match(text, /"previousTag":"green"/);
      } finally {
        if (!closed) await h.close();
      }
    });
  });
}
