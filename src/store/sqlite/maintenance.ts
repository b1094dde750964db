/** The writer thread's health checks of the store (see health.ts). */
import type Database from 'better-sqlite3';
import type { StoreMaintenance } from './writer-protocol.js';

// Five findings are enough to say what is wrong; a badly damaged file has thousands.
const FINDINGS = 5;

export class SqliteMaintenance implements StoreMaintenance {
  // Rewrites the newest migration's row as it is: a real write (a page goes to the
  // WAL and is fsync'd), on a table only the store uses, that changes no data.
  private readonly touch: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.touch = db.prepare(
      'UPDATE schema_migrations SET name = name WHERE version = (SELECT max(version) FROM schema_migrations)',
    );
  }

  quickCheck(): string[] {
    return (this.db.pragma(`quick_check(${FINDINGS})`) as { quick_check: string }[]).map((row) => row.quick_check);
  }

  probeWrite(): void {
    this.touch.run();
  }
}
