/**
 * The store backends the API contract suite runs against. Every API test file
 * loops over `testBackends()`, so each behaviour is proven on every store.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { tempDir } from './temp.js';

export interface OpenedTestStore {
  readonly store: Store;
  /** The DATABASE_URL naming this store (for child processes and the CLI). */
  readonly databaseUrl: string;
  /** Removes everything the test store created (files, schema). */
  cleanup(): Promise<void>;
}

export interface TestBackend {
  readonly name: 'sqlite' | 'postgres';
  /** A fresh, empty, migrated store that no other test shares. */
  open(): Promise<OpenedTestStore>;
}

export const sqliteBackend: TestBackend = {
  name: 'sqlite',
  async open() {
    const dir = tempDir();
    const path = join(dir, 'plantstore.db');
    const store = SqliteStore.open({ path });
    return {
      store,
      databaseUrl: `sqlite:${path}`,
      async cleanup() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

export function testBackends(): TestBackend[] {
  return [sqliteBackend];
}
