/**
 * The heavy clients of the bench's mixed phase (mixed.ts): expensive searches in a
 * loop, imports back to back (valid plants, and junk lines that give no plant), and a
 * change-stream reader catching up as fast as it can read. Each runs until its Stop
 * says stopped, then finishes its request in flight, unless the Stop's signal aborts it
 * (mixed.ts gives them a bounded time: a stalled service must not hold the bench).
 */
import { Readable } from 'node:stream';
import { Agent, request, type IncomingMessage } from 'node:http';
import { percentile } from './mixed-probes.js';
import { seededPlant } from './workload.js';

/**
 * The search shapes that scan (a common 5-letter prefix of a word every seeded plant
 * has, "Plant N", plus a letter, so it matches nothing; a prefix of it that matches
 * every plant, name-ordered; and the exact count of those matches), one client each.
 */
export interface HeavySearch {
  readonly name: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
}

export const HEAVY_SEARCHES: readonly HeavySearch[] = [
  { name: 'q=plantx (no match)', path: '/plants?q=plantx&limit=1' },
  { name: 'q=plan&sort=name', path: '/plants?q=plan&sort=name&limit=1' },
  { name: 'q=plan, count=exact', path: '/plants?q=plan&limit=1', headers: { prefer: 'count=exact' } },
];

/** Lines of junk in one junk import: each an invalid NDJSON line, so the import answers 400 having read them all. */
export const JUNK_LINES = 500_000;

/** When the heavy clients stop sending (stopped), and when they give up on the requests still in flight (signal). */
export interface Stop {
  readonly stopped: () => boolean;
  readonly signal: AbortSignal;
}

export interface RequestLoop {
  /** Requests answered (any status) and their latency. */
  readonly done: number;
  readonly p50: number;
  readonly max: number;
  readonly statuses: Record<string, number>;
  readonly errors: number;
  /** Requests still in flight when the signal aborted them. */
  readonly cutOff: number;
}

export interface ImportLoop extends RequestLoop {
  /** Plants the answered imports created, and the seconds they took in all. */
  readonly plants: number;
  readonly seconds: number;
}

export interface CatchUp {
  /** plant.* events received in all, and the seconds from the first connection to the stop. */
  readonly events: number;
  readonly seconds: number;
  /** Connections made (the first included) and why the earlier ones ended. */
  readonly connections: number;
  readonly overflows: number;
  readonly otherEnds: number;
  /** Seconds until the backlog (`backlog` events) had arrived; undefined if it never did. */
  readonly backlogSeconds?: number;
  readonly statuses: Record<string, number>;
  readonly errors: number;
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

/** One request, its answer read whole (kept when short), or an error on the socket. */
interface RequestInit {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: Readable;
  readonly signal?: AbortSignal;
}

export function exchange(url: string, init: RequestInit): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const options = { agent, method: init.method ?? 'GET', headers: init.headers, signal: init.signal };
    const req = request(url, options, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        if (body.length < 4096) body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (init.body === undefined) req.end();
    else init.body.pipe(req);
  });
}

/** Runs `next` back to back until stopped, tallying answers; `onAnswer` sees each. */
async function loop<A extends Answer>(
  stop: Stop,
  next: () => Promise<A>,
  onAnswer: (answer: A) => void = () => {},
): Promise<RequestLoop> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let cutOff = 0;
  while (!stop.stopped()) {
    try {
      const answer = await next();
      latencies.push(answer.ms);
      statuses[String(answer.status)] = (statuses[String(answer.status)] ?? 0) + 1;
      onAnswer(answer);
    } catch {
      if (stop.signal.aborted) cutOff++;
      else {
        errors++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }
  latencies.sort((a, b) => a - b);
  const max = latencies.at(-1) ?? Number.NaN;
  return { done: latencies.length, p50: percentile(latencies, 50), max, statuses, errors, cutOff };
}

export function searchLoop(url: string, token: string, search: HeavySearch, stop: Stop): Promise<RequestLoop> {
  const headers = { authorization: `Bearer ${token}`, ...search.headers };
  return loop(stop, () => exchange(`${url}${search.path}`, { headers, signal: stop.signal }));
}

/** NDJSON of plants firstId..firstId+count-1 (seeded plants' content), in chunks of about 64 KB. */
function* plantLines(firstId: number, count: number): Generator<string> {
  let text = '';
  for (let id = firstId; id < firstId + count; id++) {
    text += `${JSON.stringify(seededPlant(id))}\n`;
    if (text.length >= 65_536) {
      yield text;
      text = '';
    }
  }
  if (text !== '') yield text;
}

function* junkLines(count: number): Generator<string> {
  const chunk = 'x\n'.repeat(32_768);
  for (let left = count; left > 0; left -= 32_768) yield left >= 32_768 ? chunk : 'x\n'.repeat(left);
}

/** One import of `count` new plants with ids from `firstId`, streamed; answers what it created. */
export async function importPlants(
  url: string,
  token: string,
  firstId: number,
  count: number,
  signal?: AbortSignal,
): Promise<Answer & { created: number }> {
  const answer = await exchange(`${url}/plants/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body: Readable.from(plantLines(firstId, count)),
    signal,
  });
  const created = answer.status === 200 ? (JSON.parse(answer.body) as { created: number }).created : 0;
  return { ...answer, created };
}

/** Valid imports back to back, each `count` new plants from the next block of ids. */
export async function importLoop(
  url: string,
  token: string,
  ids: { next: number },
  count: number,
  stop: Stop,
): Promise<ImportLoop> {
  let plants = 0;
  let ms = 0;
  const figures = await loop(
    stop,
    () => {
      const firstId = ids.next;
      ids.next += count;
      return importPlants(url, token, firstId, count, stop.signal);
    },
    (answer) => {
      ms += answer.ms;
      plants += answer.created;
    },
  );
  return { ...figures, plants, seconds: ms / 1000 };
}

/** Junk imports back to back: JUNK_LINES invalid lines each, all-or-nothing, so each reads them all and answers 400. */
export async function junkLoop(url: string, token: string, stop: Stop): Promise<ImportLoop> {
  let ms = 0;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' };
  const figures = await loop(
    stop,
    () => {
      const body = Readable.from(junkLines(JUNK_LINES));
      return exchange(`${url}/plants/import`, { method: 'POST', headers, body, signal: stop.signal });
    },
    (answer) => (ms += answer.ms),
  );
  return { ...figures, plants: 0, seconds: ms / 1000 };
}

/** The position a stream opened now starts at: the id of its first (id-only) message. */
export function streamPosition(url: string, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET /events answered ${res.statusCode}`));
        return;
      }
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const match = /^id: (.*)$/m.exec(text);
        if (match !== null) {
          resolve(match[1] as string);
          req.destroy();
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Reads GET /events from position `from` as fast as the service sends, resuming after
 * the last id received whenever the service ends the stream (stream.overflow), until
 * `stopped()`; `backlog` is how many events the log held after `from` when it began.
 */
export async function catchUp(
  url: string,
  token: string,
  from: string,
  backlog: number,
  { stopped }: Stop,
): Promise<CatchUp> {
  const started = performance.now();
  let last = from;
  let events = 0;
  let connections = 0;
  let overflows = 0;
  let otherEnds = 0;
  let errors = 0;
  let backlogSeconds: number | undefined;
  const statuses: Record<string, number> = {};
  const read = (res: IncomingMessage) =>
    new Promise<void>((resolve) => {
      let carry = '';
      const check = setInterval(() => {
        if (stopped()) res.destroy();
      }, 20);
      const done = () => {
        clearInterval(check);
        resolve();
      };
      res.on('data', (chunk: Buffer) => {
        const lines = (carry + chunk.toString()).split('\n');
        carry = lines.pop() as string;
        for (const line of lines) {
          if (line.startsWith('id: ')) last = line.slice(4);
          else if (line.startsWith('event: plant.')) {
            events++;
            if (events === backlog) backlogSeconds = (performance.now() - started) / 1000;
          } else if (line === 'event: stream.overflow') overflows++;
          else if (line.startsWith('event: stream.')) otherEnds++;
        }
      });
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
  while (!stopped()) {
    connections++;
    const res = await new Promise<IncomingMessage | undefined>((resolve) => {
      const headers = { authorization: `Bearer ${token}`, 'last-event-id': last };
      const req = request(`${url}/events`, { headers }, resolve);
      req.on('error', () => resolve(undefined));
      req.end();
    });
    if (res === undefined) {
      errors++;
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    statuses[String(res.statusCode)] = (statuses[String(res.statusCode)] ?? 0) + 1;
    if (res.statusCode !== 200) {
      res.resume();
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    await read(res);
  }
  const seconds = (performance.now() - started) / 1000;
  return { events, seconds, connections, overflows, otherEnds, backlogSeconds, statuses, errors };
}
