/**
 * WEBHOOK_RETRY_SCHEDULE: the delays after the first (immediate) attempt. The default follows
 * the Standard Webhooks / Svix practice, about 27.6 hours in all, so a subscriber down for
 * most of a day still gets every event.
 */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const STEP = /^(\d{1,9})(ms|s|m|h|d)$/;
const MAX_STEPS = 50;
const MAX_DELAY_MS = 7 * 86_400_000;

export class RetryScheduleError extends Error {}

/** Parses "5s,5m,30m,2h" (or "none") into delays in milliseconds; throws explaining the expected form. */
export function parseRetrySchedule(text: string): number[] {
  // "none": one attempt only (a manual retry can still be asked for).
  if (text.trim() === 'none') return [];
  const steps = text.split(',').map((step) => step.trim());
  const delays: number[] = [];
  for (const step of steps) {
    const match = STEP.exec(step);
    const delay = match === null ? Number.NaN : Number(match[1]) * (UNIT_MS[match[2] as string] as number);
    if (!Number.isFinite(delay) || delay > MAX_DELAY_MS) {
      throw new RetryScheduleError(
        `'${step}' is not a delay: use comma-separated numbers with a unit (ms, s, m, h, d), each at most 7d, e.g. ${DEFAULT_RETRY_SCHEDULE}`,
      );
    }
    delays.push(delay);
  }
  if (delays.length > MAX_STEPS) throw new RetryScheduleError(`at most ${MAX_STEPS} retries (got ${delays.length})`);
  return delays;
}

/** WEBHOOK_DISABLE_AFTER's default: Svix's, long enough to span a long weekend's outage. */
export const DEFAULT_DISABLE_AFTER = '5d';
const MAX_DISABLE_AFTER_MS = 365 * 86_400_000;

/** Parses one duration ("5d", "36h") in milliseconds, or "never" as 0; throws explaining the expected form. */
export function parseDisableAfter(text: string): number {
  if (text.trim() === 'never') return 0;
  const match = STEP.exec(text.trim());
  const ms = match === null ? Number.NaN : Number(match[1]) * (UNIT_MS[match[2] as string] as number);
  if (!Number.isFinite(ms) || ms <= 0 || ms > MAX_DISABLE_AFTER_MS)
    throw new RetryScheduleError(
      `'${text}' is not a duration: use a number with a unit (ms, s, m, h, d), more than 0 and at most 365d, e.g. ${DEFAULT_DISABLE_AFTER}, or never`,
    );
  return ms;
}
