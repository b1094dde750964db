/**
 * Test harness: a real app on a real store (a fresh SQLite file per harness),
 * with tokens of each kind, driven through HTTP (inject or a real socket).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { issueToken } from '../../src/tokens/token-service.js';

export interface Harness {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly dir: string;
  readonly dbPath: string;
  readonly config: Config;
  /** Secrets of tokens with the named scopes. */
  readonly tokens: { readonly write: string; readonly read: string; readonly admin: string; readonly all: string };
  /** Everything the app logged, one JSON line per entry. */
  logs(): string;
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly env?: Record<string, string>;
  readonly openStore?: (dbPath: string) => Store;
}

export function tempDir(prefix = 'plantstore-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = tempDir();
  const dbPath = join(dir, 'plantstore.db');
  const config = loadConfig({ DATABASE_URL: `sqlite:${dbPath}`, LOG_LEVEL: 'info', ...options.env });
  const store = options.openStore?.(dbPath) ?? SqliteStore.open({ path: dbPath });
  const issue = async (name: string, scopes: ('plants:read' | 'plants:write' | 'admin')[]) =>
    (await issueToken(store.tokens, { name, scopes })).secret;
  const tokens = {
    write: await issue('writer', ['plants:write']),
    read: await issue('reader', ['plants:read']),
    admin: await issue('admin', ['admin']),
    all: await issue('all', ['plants:read', 'plants:write', 'admin']),
  };
  let logText = '';
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logText += String(chunk);
      done();
    },
  });
  const app = await buildApp(config, { store, logStream });
  return {
    app,
    store,
    dir,
    dbPath,
    config,
    tokens,
    logs: () => logText,
    request: (request) => app.inject(request),
    async close() {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const json = { 'content-type': 'application/json' } as const;

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** POST /plants with a raw JSON text body (so numbers are sent exactly as written). */
export function postPlant(harness: Harness, body: string, token = harness.tokens.write): Promise<LightMyRequestResponse> {
  return harness.request({ method: 'POST', url: '/plants', headers: { ...json, ...bearer(token) }, payload: body });
}
