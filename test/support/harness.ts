/**
 * Test harness: a real app on a real store (a fresh SQLite file per harness),
 * with tokens of each kind, driven through HTTP (inject or a real socket). Every
 * response is checked against the app's OpenAPI document (contract-check.ts): an
 * injected one when it arrives, a socket's when the harness closes.
 */
import { AssertionError } from 'node:assert';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Store } from '../../src/store/types.js';
import { SCOPES, type Scope } from '../../src/domain/scopes.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { sqliteBackend, type TestBackend } from './backends.js';
import { checkServerResponses, ContractCheck, decoded, encodingOf } from './contract-check.js';

export interface Harness {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly backend: TestBackend['name'];
  readonly databaseUrl: string;
  readonly config: Config;
  /** Secrets of tokens with the named scopes (`all`: every scope). */
  readonly tokens: { readonly write: string; readonly read: string; readonly admin: string; readonly all: string };
  /** Everything the app logged, one JSON line per entry. */
  logs(): string;
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly backend?: TestBackend;
  readonly env?: Record<string, string>;
  /** Wraps the opened store, e.g. to inject a fault into one method. */
  readonly wrapStore?: (store: Store, databaseUrl: string) => Store;
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const backend = options.backend ?? sqliteBackend;
  const opened = await backend.open();
  const config = loadConfig({ DATABASE_URL: opened.databaseUrl, LOG_LEVEL: 'info', ...options.env });
  const store = options.wrapStore?.(opened.store, opened.databaseUrl) ?? opened.store;
  const issue = async (name: string, scopes: readonly Scope[]) =>
    (await issueToken(store.tokens, { name, scopes })).secret;
  const tokens = {
    write: await issue('writer', ['plants:write']),
    read: await issue('reader', ['plants:read']),
    admin: await issue('admin', ['admin']),
    all: await issue('all', SCOPES),
  };
  let logText = '';
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logText += String(chunk);
      done();
    },
  });
  const app = await buildApp(config, { store, logStream });
  const check = ContractCheck.of(app);
  const socketProblems: string[] = [];
  checkServerResponses(app, check, (problem) => socketProblems.push(problem));
  const mismatch = (problems: readonly string[]) =>
    new AssertionError({ message: `responses do not match the OpenAPI document:\n${problems.join('\n')}` });
  return {
    app,
    store,
    backend: backend.name,
    databaseUrl: opened.databaseUrl,
    config,
    tokens,
    logs: () => logText,
    async request(request) {
      const response = await app.inject(request);
      const { method, url } = response.raw.req;
      const seen = { method: method ?? 'GET', url: url ?? '/', status: response.statusCode, headers: response.headers };
      const body = decoded(response.rawPayload, encodingOf(response.headers['content-encoding']));
      const problems = check.problems({ ...seen, body });
      if (problems.length > 0) throw mismatch(problems);
      return response;
    },
    async close() {
      await app.close();
      await opened.cleanup();
      if (socketProblems.length > 0) throw mismatch(socketProblems);
    },
  };
}

export const json = { 'content-type': 'application/json' } as const;

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** POST /plants with a raw JSON text body (so numbers are sent exactly as written). */
export function postPlant(
  harness: Harness,
  body: string,
  token = harness.tokens.write,
): Promise<LightMyRequestResponse> {
  return harness.request({ method: 'POST', url: '/plants', headers: { ...json, ...bearer(token) }, payload: body });
}
