/** A minimal Server-Sent Events reader over a real socket, for the tests: messages as they arrive, pausing, closing. */
import { request, type IncomingMessage } from 'node:http';

export interface SseMessage {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
}

export interface SseConnection {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** The messages (events, id-only messages) received so far. */
  readonly messages: SseMessage[];
  /** Resolves once the server has ended the stream. */
  readonly ended: Promise<void>;
  /** The body, for an answer that is not a stream (an Error record). */
  body(): Promise<string>;
  /** Resolves when `count` messages matching `where` have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, where?: (message: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage[]>;
  pause(): void;
  resume(): void;
  close(): void;
}

/** The last id among the messages: where a client resumes. */
export function lastId(messages: readonly SseMessage[]): string | undefined {
  return messages.findLast((message) => message.id !== undefined)?.id;
}

export function openStream(url: string, token: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...headers } },
      (res) => {
        const messages: SseMessage[] = [];
        const waiters = new Set<() => void>();
        let buffer = '';
        let raw = '';
        let endedResolve: () => void = () => {};
        const ended = new Promise<void>((r) => (endedResolve = r));
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          raw += chunk.length < 10_000 && raw.length < 10_000 ? chunk : '';
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const fields: Record<string, string> = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':') || line === '') continue;
              const colon = line.indexOf(':');
              fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
            }
            if (fields.id !== undefined || fields.data !== undefined)
              messages.push({ id: fields.id, event: fields.event, data: fields.data });
          }
          for (const waiter of waiters) waiter();
        });
        res.on('end', () => endedResolve());
        res.on('close', () => endedResolve());
        res.on('error', () => endedResolve());
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          messages,
          ended,
          body: async () => {
            await ended;
            return raw;
          },
          waitFor(count, where = () => true, timeoutMs = 10_000) {
            return new Promise((done, fail) => {
              const check = () => {
                const found = messages.filter(where);
                if (found.length >= count) {
                  waiters.delete(check);
                  clearTimeout(timer);
                  done(found);
                }
              };
              const timer = setTimeout(() => {
                waiters.delete(check);
                fail(new Error(`only ${messages.filter(where).length} of ${count} messages after ${timeoutMs} ms`));
              }, timeoutMs);
              waiters.add(check);
              void ended.then(check);
              check();
            });
          },
          pause: () => res.pause(),
          resume: () => res.resume(),
          close: () => {
            req.destroy();
            res.destroy();
          },
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
