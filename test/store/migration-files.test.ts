/**
 * The schema's numbered .sql files (src/store/migrations/<dialect>/): one numbering
 * for both dialects, no gaps or duplicates, names that match what earlier releases
 * recorded in schema_migrations, and the pending list a store's record implies.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { StoreTooNewError } from '../../src/store/errors.js';
import { migrationsOf, pendingMigrations, type Dialect } from '../../src/store/migrations.js';

const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

/** What the release before the .sql layout recorded, version by version. */
const RECORDED_BY_EARLIER_RELEASES = {
  sqlite: ['plants and tokens', 'webhooks', 'webhook retention', 'webhook secret rotation', 'plant json column'],
  postgres: ['plants and tokens', 'webhooks', 'webhook retention', 'webhook secret rotation'],
} as const;

describe('migration files', () => {
  for (const dialect of DIALECTS) {
    it(`${dialect}: every file is NNNN-name.sql, numbered without duplicates, each with SQL in it`, () => {
      const files = readdirSync(new URL(`../../src/store/migrations/${dialect}/`, import.meta.url));
      assert.ok(files.length > 0);
      for (const file of files) assert.match(file, /^\d{4}-[a-z0-9-]+\.sql$/);
      const migrations = migrationsOf(dialect);
      assert.equal(migrations.length, files.length);
      assert.equal(new Set(migrations.map((m) => m.version)).size, migrations.length, 'a version is used twice');
      assert.equal(migrations[0]?.version, 1);
      for (const migration of migrations) assert.match(migration.sql, /\b(CREATE|ALTER|INSERT|DROP)\b/);
    });

    it(`${dialect}: the steps earlier releases applied keep their numbers and names`, () => {
      const names = migrationsOf(dialect).map((m) => m.name);
      assert.deepEqual(names.slice(0, RECORDED_BY_EARLIER_RELEASES[dialect].length), [
        ...RECORDED_BY_EARLIER_RELEASES[dialect],
      ]);
    });
  }

  it('a number used by both dialects names the same step', () => {
    const sqlite = new Map(migrationsOf('sqlite').map((m) => [m.version, m.name]));
    for (const { version, name } of migrationsOf('postgres')) {
      if (sqlite.has(version)) assert.equal(sqlite.get(version), name, `step ${version}`);
    }
  });

  it('pending: what the store has not applied, in order; nothing for an up-to-date store; a newer store is refused', () => {
    const all = migrationsOf('sqlite');
    const versions = all.map((m) => m.version);
    assert.deepEqual(pendingMigrations(all, versions, 'here'), []);
    assert.deepEqual(
      pendingMigrations(all, [1, 2], 'here').map((m) => m.version),
      versions.filter((v) => v > 2),
    );
    assert.deepEqual(
      pendingMigrations(all, [], 'here').map((m) => m.version),
      versions,
    );
    assert.throws(() => pendingMigrations(all, [...versions, Math.max(...versions) + 1], 'at x.db'), StoreTooNewError);
  });
});
