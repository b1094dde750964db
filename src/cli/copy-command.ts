/** `plantstore copy --from URL --to URL` (src/store/copy/; docs/postgresql.md, "Moving from SQLite to PostgreSQL"). */
import type { Command } from 'commander';
import { ConfigError } from '../config/index.js';
import { copyStore, CopyError, type CopyReport } from '../store/copy/copy-store.js';
import { StoreTooNewError } from '../store/errors.js';
import type { Options } from './options.js';
import { printVerification, progressPrinter } from './copy-output.js';

const HELP = `
Copies plants (ids, versions, times), the version counter, the page-cursor secret,
tokens, webhook subscriptions with their secrets, and every webhook event, delivery
and attempt, so undelivered events are delivered from the target. Both stores are
migrated to this release's schema first. The target must be empty (--replace empties
it, in the copy's own transaction).

The source is read in one snapshot (SQLite: a read transaction; PostgreSQL:
REPEATABLE READ), so the copy is one consistent state of the store even while a
service writes to it, but writes made after the snapshot are not in it: stop the
service first (or copy a backup) to move a store without losing late writes.
The target's tables are locked against other writers until the copy commits.

Then both sides are counted and their plants hashed (SHA-256, the same way on
both); the table goes to stdout, progress to stderr. The target is committed only
if every figure matches; otherwise, or on any failure, it is left as it was.

Exit status: 0 copied and verified; 1 failed or not verified (target unchanged);
2 refused, nothing written (missing source, non-empty target, a store a newer
release migrated).

Example:
  plantstore copy --from sqlite:./data/plantstore.db \\
                  --to 'postgres://plantstore@db.internal:5432/plantstore'`;

async function run(from: string, to: string, replace: boolean): Promise<CopyReport> {
  try {
    return await copyStore(from, to, { replace, onProgress: progressPrinter() });
  } catch (error) {
    // Refusals are the user's to fix: one line and exit status 2, as for a bad setting.
    if (error instanceof CopyError || error instanceof StoreTooNewError)
      throw new ConfigError(error.message, { cause: error });
    throw error;
  }
}

export function registerCopyCommands(program: Command): void {
  program
    .command('copy')
    .description('Copy a whole store into an empty one (SQLite to PostgreSQL and back), and verify it.')
    .requiredOption('--from <url>', 'the store to copy: sqlite:<path> (must exist) or postgres://...')
    .requiredOption(
      '--to <url>',
      'the store to fill: sqlite:<path> (created if missing) or postgres://... (?options=-c%20search_path%3D<schema> for a schema)',
    )
    .option(
      '--replace',
      'empty a target that holds data rather than refuse it (its contents go only if the copy verifies)',
    )
    .addHelpText('after', HELP)
    .action(async (options: Options) => {
      const report = await run(String(options.from), String(options.to), options.replace === true);
      if (report.replaced !== undefined && report.committed)
        process.stderr.write("the target's previous contents were replaced.\n");
      printVerification(report);
      if (!report.committed)
        throw new Error(
          `the copy did not verify (${report.differences.join(', ')}): nothing was written to ${report.target.label}`,
        );
    });
}
