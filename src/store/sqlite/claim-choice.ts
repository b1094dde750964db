/**
 * Which due deliveries a SQLite claim takes, under the write lock (PostgreSQL does the same in its claim
 * statement): each enabled subscription gives at most its allowance, round-robin, so one subscription's backlog
 * never fills a claim; a throttled one's allowance is what its rate leaves, and its new count is returned.
 */
import type { ClaimRequest } from '../webhook-types.js';

export interface ThrottleRow {
  id: string;
  max_per_second: number | null;
  throttle_last_at: number | null;
  throttle_count: number;
}

export interface DueRow {
  id: string;
  next_attempt_at: number;
}

export interface ClaimChoice {
  /** Oldest due of every subscription first, then the second of each, and so on. */
  readonly deliveries: readonly DueRow[];
  /** Throttled subscriptions that gave some: their count in the current run. */
  readonly meters: ReadonlyMap<string, number>;
}

/** A run of max_per_second starts once this long has passed since the run's last start. */
export const THROTTLE_PAUSE_MS = 1000;

export function chooseClaim(
  subscriptions: readonly ThrottleRow[],
  request: ClaimRequest,
  dueOf: (subscriptionId: string, allowance: number) => DueRow[],
): ClaimChoice {
  const at = request.now.getTime();
  const perSubscription = request.perSubscription ?? request.limit;
  const due: { rows: DueRow[]; subscription: ThrottleRow; base: number }[] = [];
  for (const subscription of subscriptions) {
    let allowance = request.limit;
    let base = 0;
    if (subscription.max_per_second !== null) {
      const fresh = subscription.throttle_last_at === null || subscription.throttle_last_at <= at - THROTTLE_PAUSE_MS;
      base = fresh ? 0 : subscription.throttle_count;
      allowance = Math.min(allowance, subscription.max_per_second - base);
    }
    const rows = allowance > 0 ? dueOf(subscription.id, allowance) : [];
    if (rows.length > 0) due.push({ rows, subscription, base });
  }
  // The share applies only while another subscription has deliveries due: alone, one may use every slot.
  const shared = due.length > 1;
  const candidates = due.flatMap(({ rows, subscription, base }) => {
    const share = shared ? perSubscription - (request.inFlight?.get(subscription.id) ?? 0) : request.limit;
    return rows.slice(0, Math.max(0, share)).map((row, turn) => ({ due: row, turn, subscription, base }));
  });
  candidates.sort((a, b) => a.turn - b.turn || a.due.next_attempt_at - b.due.next_attempt_at);
  const taken = candidates.slice(0, request.limit);
  const meters = new Map<string, number>();
  for (const { subscription, base } of taken)
    if (subscription.max_per_second !== null) meters.set(subscription.id, (meters.get(subscription.id) ?? base) + 1);
  return { deliveries: taken.map((candidate) => candidate.due), meters };
}
