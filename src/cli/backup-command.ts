/**
 * `plantstore backup` and `restore` for the SQLite store (src/store/sqlite/backup.ts); for
 * PostgreSQL they point to its own tools.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../config/index.js';
import type { CopyReport } from '../store/sqlite/backup.js';
import { configFrom, withDatabaseOption, type Options } from './options.js';

const EXIT_STATUS = 'Exit: 0 done; 1 refused or failed (nothing replaced); 2 bad configuration.';

const BACKUP_HELP = `
Copies the store that DATABASE_URL names to FILE while the service runs and
keeps writing. It uses SQLite's online backup API in one read transaction, so
FILE is the store as it was at one moment: every write answered before the
backup began is in it. The service never waits for the backup. The copy is
written beside FILE, checked (PRAGMA quick_check, schema_migrations), fsync'd
and renamed to FILE, so FILE is either the whole backup or absent. FILE is one
self-contained SQLite file (no -wal or -shm): copy it anywhere, and plantstore
restore puts it back.

An existing FILE is replaced only with --force, and never while a process has
it open. On PostgreSQL use pg_dump instead (docs/postgresql.md).
${EXIT_STATUS}`;

const RESTORE_HELP = `
Stop the service first. The store that DATABASE_URL names is replaced by the
backup FILE, or created from it. restore refuses, and changes nothing, while
any process has the store open, a running service included; a service that was
stopped or killed does not count. Keep the service stopped until restore
returns.

FILE must be a sound Plant Store (PRAGMA quick_check, schema_migrations) with
a schema this release knows. A backup from an earlier release is migrated when
the service starts. The backup is copied beside the store, checked, fsync'd
and renamed over it while the store's lock is held, so the store is always
either the old one or the restored one. An existing store is replaced only
with --force: everything written to it since the backup is lost, so back it up
first if in doubt. On PostgreSQL use pg_restore instead (docs/postgresql.md).
${EXIT_STATUS}`;

/** The SQLite file DATABASE_URL names; a postgres:// URL is pointed to PostgreSQL's own tools. */
function sqlitePath(options: Options, command: 'backup' | 'restore'): string {
  const { databaseUrl } = configFrom(options);
  if (!databaseUrl.startsWith('sqlite:')) {
    const tool = command === 'backup' ? 'pg_dump' : 'pg_restore';
    throw new ConfigError(
      `plantstore ${command} copies SQLite stores; on PostgreSQL use ${tool} (docs/postgresql.md, "Backing up and restoring")`,
    );
  }
  return resolve(databaseUrl.slice('sqlite:'.length));
}

function summary(report: CopyReport): string {
  const mib = (report.bytes / 1024 / 1024).toFixed(1);
  const seconds = (report.durationMs / 1000).toFixed(2);
  return `${report.plants} plants, schema version ${report.schemaVersion}, ${report.pages} pages (${mib} MiB), in ${seconds} s`;
}

// The module is loaded only when one of these commands runs, as openStore loads a store's
// module: the other commands do not need it.
const backupModule = () => import('../store/sqlite/backup.js');

export function registerBackupCommands(program: Command): void {
  withDatabaseOption(
    program
      .command('backup')
      .description('Copy the SQLite store to FILE, consistently, while the service runs and writes.')
      .argument('<file>', 'where to write the backup')
      .option('--force', 'replace FILE if it exists')
      .addHelpText('after', BACKUP_HELP),
  ).action(async (file: string, options: Options) => {
    const source = sqlitePath(options, 'backup');
    const { backupSqlite } = await backupModule();
    const report = await backupSqlite(source, file, { force: options.force === true });
    const replaced = report.replaced ? ' (replacing the file that was there)' : '';
    process.stderr.write(`backed up ${report.source} to ${report.target}${replaced}: ${summary(report)}\n`);
  });

  withDatabaseOption(
    program
      .command('restore')
      .description('Replace the SQLite store with the backup FILE (stop the service first).')
      .argument('<file>', 'a backup written by plantstore backup')
      .option('--force', 'replace an existing store (what it holds is lost)')
      .addHelpText('after', RESTORE_HELP),
  ).action(async (file: string, options: Options) => {
    const target = sqlitePath(options, 'restore');
    const { restoreSqlite } = await backupModule();
    const report = await restoreSqlite(file, target, { force: options.force === true });
    const replaced = report.replaced ? ', replacing the store that was there' : '';
    process.stderr.write(`restored ${report.target} from ${report.source}${replaced}: ${summary(report)}\n`);
  });
}
