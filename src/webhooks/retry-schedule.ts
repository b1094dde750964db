/**
 * When a failed delivery is tried again, each delay jittered by +-20% so deliveries that
 * failed together (a subscriber outage) do not all come back at the same instant.
 */

/** Spread applied to each delay: the actual delay is in [delay * (1 - J), delay * (1 + J)]. */
export const RETRY_JITTER = 0.2;

/**
 * When the attempt after `completedAttempts` failed ones is due, or undefined when the
 * schedule is exhausted (the delivery is then failed). `random` is injectable for tests.
 */
export function nextAttemptDelay(
  schedule: readonly number[],
  completedAttempts: number,
  random: () => number = Math.random,
): number | undefined {
  const delay = schedule[completedAttempts - 1];
  if (delay === undefined) return undefined;
  return Math.round(delay * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}
