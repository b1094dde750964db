/**
 * A concurrent create load for the chaos tests: workers POST plants with unique
 * ids and awkward names over real sockets, and remember exactly what they sent
 * and which creates were acknowledged (200), so the store can be audited after
 * the service was killed.
 */
import { isCataloguedError } from '../support/assertions.js';
import { responseProblems } from '../support/checked-fetch.js';

export interface SentPlant {
  readonly id: string;
  readonly name: string;
  readonly tag?: string;
}

export interface LoadLedger {
  /** Every plant a request was sent for (acknowledged or not), by id. */
  readonly attempted: Map<string, SentPlant>;
  /** Plants whose create was answered 200 with the exact Plant body. */
  readonly acknowledged: Map<string, SentPlant>;
  /** Sent, but no answer came (connection refused, reset or timed out): the outcome is unknown. */
  readonly unknown: Map<string, SentPlant>;
  readonly statuses: Map<string, number>;
  /** Responses that broke the contract (a 5xx other than 503, a failure without an Error record, a wrong 200 body). */
  readonly violations: string[];
}

export function newLedger(): LoadLedger {
  return { attempted: new Map(), acknowledged: new Map(), unknown: new Map(), statuses: new Map(), violations: [] };
}

// Names that stress encoding and storage: quotes, backslashes, non-BMP, RTL, combining marks.
const AWKWARD = [
  'Monstera',
  'Ficus "lyrata"',
  'back\\slash',
  'Ærøskøbing fern',
  '🌵 cactus',
  'שרך',
  'e\u0301\u0301',
  "O'Brien's ivy",
  '漢字',
];

export function plantFor(id: bigint): SentPlant {
  const n = Number(id % 1000n);
  const name = `${AWKWARD[n % AWKWARD.length]} #${id}`;
  return n % 3 === 0
    ? { id: String(id), name }
    : { id: String(id), name, tag: `tag-${n % 7}-${AWKWARD[(n + 1) % AWKWARD.length]}` };
}

export function bodyOf(plant: SentPlant): string {
  const tag = plant.tag === undefined ? '' : `, "tag": ${JSON.stringify(plant.tag)}`;
  return `{"id": ${plant.id}, "name": ${JSON.stringify(plant.name)}${tag}}`;
}

function count(ledger: LoadLedger, key: string): void {
  ledger.statuses.set(key, (ledger.statuses.get(key) ?? 0) + 1);
}

/** Sends one create and records its outcome. Returns false when no answer came. */
export async function sendCreate(
  url: string,
  token: string,
  plant: SentPlant,
  ledger: LoadLedger,
  timeoutMs = 10_000,
): Promise<boolean> {
  ledger.attempted.set(plant.id, plant);
  let status: number;
  let text: string;
  let answer: Response;
  try {
    const response = await fetch(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: bodyOf(plant),
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    text = await response.text();
    answer = response;
  } catch {
    count(ledger, 'no answer');
    ledger.unknown.set(plant.id, plant);
    return false;
  }
  count(ledger, String(status));
  ledger.unknown.delete(plant.id);
  // An answer off the OpenAPI document is a violation, like a wrong body.
  ledger.violations.push(...(await responseProblems('POST', new URL(`${url}/plants`), answer, text)));
  if (status === 200) {
    const expected = plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag };
    if (text !== JSON.stringify(expected)) ledger.violations.push(`200 for ${plant.id} with body ${text}`);
    else ledger.acknowledged.set(plant.id, plant);
    return true;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!isCataloguedError(body))
    ledger.violations.push(`${status} for ${plant.id} without an Error record: ${text.slice(0, 200)}`);
  else if (status >= 500 && status !== 503) ledger.violations.push(`${status} for ${plant.id}: ${text.slice(0, 200)}`);
  return true;
}

export interface LoadRun {
  /** Resolves when every worker has stopped. */
  readonly done: Promise<void>;
  /** Asks the workers to stop after their current request. */
  stop(): void;
}

/**
 * Starts `concurrency` workers creating plants with ids from `firstId` upwards,
 * until stop() or until a worker gets `maxFailuresInARow` unanswered requests in
 * a row (the service is gone).
 */
export function startCreateLoad(options: {
  url: string;
  token: string;
  ledger: LoadLedger;
  concurrency: number;
  firstId: bigint;
  maxFailuresInARow?: number;
}): LoadRun {
  let nextId = options.firstId;
  let stopped = false;
  const maxFailures = options.maxFailuresInARow ?? 3;
  const worker = async (): Promise<void> => {
    let failuresInARow = 0;
    while (!stopped && failuresInARow < maxFailures) {
      const plant = plantFor(nextId++);
      const answered = await sendCreate(options.url, options.token, plant, options.ledger);
      failuresInARow = answered ? 0 : failuresInARow + 1;
      if (!answered) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const done = Promise.all(Array.from({ length: options.concurrency }, worker)).then(() => undefined);
  return { done, stop: () => void (stopped = true) };
}
