/**
 * What the processes of a multi-worker instance say to each other over cluster IPC (advanced serialization:
 * bigints, Dates and plain objects cross as they are). An ask gets one answer; a tell gets none.
 */
import type { IssuedTicket, Redemption } from '../events/tickets.js';
import type { RemoteWrite } from '../store/sqlite/store-writer.js';
import type { SettledCall } from '../store/sqlite/writer-protocol.js';

export interface Ask<Payload, Answer> {
  readonly payload: Payload;
  readonly answer: Answer;
}

/** A rate-limit count in the primary: one budget per key for the instance. */
export interface RateCount {
  readonly key: string;
  readonly timeWindow: number;
  readonly max: number;
}

/** What a worker asks the primary. */
export interface PrimaryAnswers {
  /** SQLite writes, in the order sent: the primary's one writer commits them (primary-writes.ts). */
  readonly writes: Ask<readonly RemoteWrite[], SettledCall[]>;
  /** The instance's metrics: every worker's, merged (src/metrics/merge-text.ts). */
  readonly metrics: Ask<null, string>;
  /** Why the instance is not ready (a worker missing or unhealthy, the store), or null when it is. */
  readonly readiness: Ask<null, string | null>;
  /** Tokens were revoked (a token and those it created): answered once every worker has dropped them. */
  readonly revoked: Ask<readonly string[], null>;
  /** Event tickets are the primary's, so a ticket one worker issued opens a stream on any (events/tickets.ts). */
  readonly 'ticket-issue': Ask<{ readonly secret: string; readonly tokenId: string }, IssuedTicket>;
  readonly 'ticket-redeem': Ask<string, Redemption>;
  readonly 'rate-count': Ask<RateCount, { current: number; ttl: number }>;
}

/** What the primary asks a worker. */
export interface WorkerAnswers {
  /** This worker's metrics, in the text format. */
  readonly metrics: Ask<null, string>;
  /** Why this worker cannot serve (its store does not answer), or null. */
  readonly ping: Ask<null, string | null>;
  /** Drop revoked tokens from this worker's cache. */
  readonly forget: Ask<readonly string[], null>;
}

/** What a worker tells the primary. */
export interface PrimaryHears {
  /** This worker accepts connections at `url`. */
  readonly listening: { readonly url: string };
  /** A write that webhook subscribers may hear of committed here: the worker that delivers them should look. */
  readonly nudge: null;
}

/** What the primary tells a worker. */
export interface WorkerHears {
  /** Writes committed (any worker's): read the change log. */
  readonly committed: null;
  /** Look at the webhook outbox now (sent to the worker that delivers). */
  readonly nudge: null;
}
