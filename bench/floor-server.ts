/**
 * The floor: the best a bare Fastify server does on this machine with the same
 * routes. It parses each request and answers from memory, with no auth, no
 * validation, no logging and no storage. The service's req/s are quoted as a
 * ratio to this server's, measured in the same bench run.
 *
 * Its GET /events is the change stream's floor: every create's plant.created
 * message, in the service's format, written to every open stream in one chunk per
 * READ_EVERY_MS (the most often the service's hub reads its change log), with no
 * change log, filters, backlog or heartbeat.
 *
 * Usage: node --import tsx bench/floor-server.ts <port>
 */
import { createReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import Fastify from 'fastify';
import { READ_EVERY_MS } from '../src/events/change-hub.js';
import { LIST_PAGE, seededPlant } from './workload.js';

const port = Number(process.argv[2] ?? 0);
const app = Fastify({ logger: false });

const streams = new Set<ServerResponse>();
let pendingMessages: string[] = [];
let lastPosition = 0;

function handOut(): void {
  if (pendingMessages.length === 0) return;
  const chunk = Buffer.from(pendingMessages.join(''));
  pendingMessages = [];
  for (const stream of streams) stream.write(chunk);
}
// The streams get what was created since the last hand-out, in one write each.
setInterval(handOut, READ_EVERY_MS).unref();

app.get('/events', (request, reply) => {
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  reply.raw.flushHeaders();
  streams.add(reply.raw);
  reply.raw.on('close', () => streams.delete(reply.raw));
});

app.post('/plants', async (request) => {
  const body = request.body as { id: number; name: string; tag?: string };
  if (streams.size > 0)
    pendingMessages.push(`id: ${++lastPosition}\nevent: plant.created\ndata: ${JSON.stringify(body)}\n\n`);
  return body.tag === undefined ? { name: body.name } : { name: body.name, tag: body.tag };
});

app.get('/plants/:id', async (request) => seededPlant(Number((request.params as { id: string }).id)));

app.addContentTypeParser(
  'application/merge-patch+json',
  { parseAs: 'string' },
  app.getDefaultJsonParser('ignore', 'ignore'),
);
app.patch('/plants/:id', async (request) => {
  const plant = seededPlant(Number((request.params as { id: string }).id));
  return { ...plant, name: (request.body as { name: string }).name };
});

// Also the find cases' answer (q, sort, cursor, Prefer are ignored): a page of the same size, answered from memory.
app.get('/plants', async (request) => {
  const query = request.query as { limit?: string; after?: string };
  const limit = Number(query.limit ?? LIST_PAGE);
  const after = Number(query.after ?? 0);
  const page = [];
  for (let id = after + 1; id <= after + limit; id++) page.push(seededPlant(id));
  return page;
});

// The bulk cases' floor: an upload read and dropped, and a file streamed back as it is.
app.addContentTypeParser('application/x-ndjson', (_request, payload, done) => done(null, payload));
app.post('/bulk-sink', async (request) => {
  for await (const chunk of request.body as AsyncIterable<Buffer>) void chunk;
  return { ok: true };
});
app.get('/bulk-source', async (request, reply) =>
  reply.type('application/x-ndjson').send(createReadStream((request.query as { file: string }).file)),
);

app.get('/healthz', async () => ({ status: 'ok' }));

await app.listen({ host: '127.0.0.1', port });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
