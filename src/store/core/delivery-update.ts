/**
 * How an attempt's outcome changes its delivery row: one rule, applied by both stores.
 */
import type { AttemptOutcome, DeliveryStatus } from '../types.js';

export interface DeliveryUpdate {
  readonly status: DeliveryStatus;
  readonly attemptCount: number;
  readonly nextAttemptAt: Date | null;
  /** Whether the manual-retry flag survives (only an interrupted manual attempt keeps it). */
  readonly keepManual: boolean;
}

export function deliveryUpdate(attempt: number, outcome: AttemptOutcome): DeliveryUpdate {
  switch (outcome.kind) {
    case 'succeeded':
      return { status: 'succeeded', attemptCount: attempt, nextAttemptAt: null, keepManual: false };
    case 'retry':
      return { status: 'pending', attemptCount: attempt, nextAttemptAt: outcome.nextAttemptAt, keepManual: false };
    case 'failed':
      return { status: 'failed', attemptCount: attempt, nextAttemptAt: null, keepManual: false };
    case 'released':
      // Cut short by a shutdown: it did not use up a place in the schedule.
      return { status: 'pending', attemptCount: attempt - 1, nextAttemptAt: outcome.nextAttemptAt, keepManual: true };
  }
}
