/**
 * The time budget of a read in a reader thread (READ_TIME_LIMIT_MS). better-sqlite3 cannot interrupt a
 * statement, so the finder's WHERE starts with `within_read_budget()`, called by SQLite per visited row, which
 * throws past the deadline and so stops the statement; it reads the clock only now and then, as that costs
 * more than the call. Work without visiting rows (FTS5 merging, sorting a search's matches) is not stopped.
 */
import type Database from 'better-sqlite3';
import { ReadTimeLimitError } from '../errors.js';

/** The condition a budgeted statement's WHERE starts with (first, so SQLite asks it for every row). */
export const WITHIN_READ_BUDGET = 'within_read_budget()';

const ROWS_PER_CLOCK_READ = 1024;

export class ReadBudget {
  private deadline = Number.POSITIVE_INFINITY;
  private rows = 0;

  constructor(
    db: Database.Database,
    private readonly limitMs: number,
  ) {
    // Not deterministic: SQLite must call it for every row, never once per statement.
    db.function('within_read_budget', { deterministic: false }, () => {
      const clockDue = ++this.rows % ROWS_PER_CLOCK_READ === 0;
      if (clockDue && performance.now() > this.deadline) throw new ReadTimeLimitError(this.limitMs);
      return 1;
    });
  }

  /** Runs one read within the budget. */
  run<T>(read: () => T): T {
    this.deadline = performance.now() + this.limitMs;
    this.rows = 0;
    try {
      return read();
    } finally {
      this.deadline = Number.POSITIVE_INFINITY;
    }
  }
}

/** For connections that read the finder's statements outside a reader thread (tests, EXPLAIN): a budget never spent. */
export function registerUnlimitedBudget(db: Database.Database): void {
  db.function('within_read_budget', { deterministic: false }, () => 1);
}
