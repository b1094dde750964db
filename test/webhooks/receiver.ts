/**
 * A real webhook subscriber for tests: node:http on 127.0.0.1, recording every
 * request (headers and exact body text) and answering as the test decides.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Status we answered, or 'hang' when we never answered. */
  readonly answered: number | 'hang';
}

/** An answer with a body of its own (any bytes) and headers, rather than text/plain 'ok' or 'nope'. */
export interface Reply {
  readonly status: number;
  readonly body: Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Decides the answer to the n-th request (0-based): a status, a reply, or 'hang' to never answer. */
export type Responder = (
  index: number,
  request: { headers: IncomingHttpHeaders; body: string },
) => number | Reply | 'hang';

export interface Receiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  respondWith(responder: Responder): void;
  /** Resolves once `predicate` holds for the requests received, or rejects after `timeoutMs`. */
  waitFor(predicate: (received: readonly ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startReceiver(responder: Responder = () => 200): Promise<Receiver> {
  let respond = responder;
  const received: ReceivedWebhook[] = [];
  const hanging = new Set<ServerResponse>();
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = respond(received.length, { headers: request.headers, body });
      received.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
        answered: typeof answer === 'object' ? answer.status : answer,
      });
      if (answer === 'hang') hanging.add(response);
      else if (typeof answer === 'object') response.writeHead(answer.status, answer.headers).end(answer.body);
      else
        response.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 200 && answer < 300 ? 'ok' : 'nope');
      for (const wake of waiters) wake();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/plants`,
    received,
    respondWith(next) {
      respond = next;
    },
    waitFor(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          cleanup();
          resolve([...received]);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `receiver: condition not met within ${timeoutMs} ms; received ${received.length}:\n${received.map((r) => `${String(r.headers['webhook-id'])} ${r.body} -> ${r.answered}`).join('\n')}`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/**
 * Verifies a request with the Standard Webhooks reference library (never our own
 * code) and returns the raw body; throws when the signature does not hold.
 */
export function verifySignature(secret: string, request: ReceivedWebhook): string {
  const headers: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
    headers[name] = String(request.headers[name]);
  // jsonParse: false, since JSON.parse would round a large id; the caller compares the raw text.
  new Webhook(secret).verify(request.body, headers, { jsonParse: false });
  return request.body;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
