/**
 * A store migrated by a newer Plant Store (a schema version this build does not
 * know) is refused, on each backend: served as if current, it would be read and
 * written by code that does not know its tables.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { testBackends } from '../support/backends.js';
import { withAdminClient } from '../support/postgres.js';
import { runCli } from '../support/service-process.js';

const FUTURE_VERSION = 999;

async function recordFutureMigration(databaseUrl: string): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length));
    try {
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        FUTURE_VERSION,
        'from the future',
        Date.now(),
      );
    } finally {
      db.close();
    }
    return;
  }
  await withAdminClient(
    (client) =>
      client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        FUTURE_VERSION,
        'from the future',
      ]),
    databaseUrl,
  );
}

for (const backend of testBackends())
  describe(`a store from a newer version [${backend.name}]`, () => {
    it('is refused by serve and migrate, with one line saying which version it needs', async () => {
      const opened = await backend.open();
      try {
        await recordFutureMigration(opened.databaseUrl);
        for (const command of ['serve', 'migrate']) {
          const run = await runCli([command], { DATABASE_URL: opened.databaseUrl, PORT: '0' }, {}, { timeout: 15_000 });
          assert.notEqual(run.code, 0, `${command} served a store from the future:\n${run.stdout}${run.stderr}`);
          const lines = run.stderr.trim().split('\n');
          assert.equal(lines.length, 1, run.stderr);
          assert.match(
            lines[0] ?? '',
            new RegExp(
              `was migrated by a newer Plant Store \\(schema version ${FUTURE_VERSION}; this build knows up to \\d+\\): upgrade Plant Store, or restore a backup made before the upgrade`,
            ),
          );
        }
      } finally {
        await opened.cleanup();
      }
    });
  });
