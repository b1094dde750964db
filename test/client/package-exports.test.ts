/**
 * The typed client as a user installs it: packed from packages/client (its prepack build), installed from the
 * tarball into an empty folder, imported by name as `@plantstore/client` from a separate Node.js process that
 * talks to a real listening service, and type-checked against the declarations it ships.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createHarness, type Harness } from '../support/harness.js';
import { packAndInstall, type InstalledPackage } from '../support/packed.js';
import { listen } from './servers.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What `@plantstore/client` needs at run time, and nothing of the service. */
const CLIENT_PACKAGES = [
  'node_modules/@plantstore/client',
  'node_modules/lossless-json',
  'node_modules/openapi-fetch',
  'node_modules/openapi-typescript-helpers',
];

const CONSUMER = `
import { createPlantStoreClient, parseJson, stringifyJson } from '@plantstore/client';
import { stringifyJson as fromSubpath } from '@plantstore/client/json';

const store = createPlantStoreClient({ baseUrl: process.env.BASE_URL, token: process.env.TOKEN });
await store.createPlant({ id: 9223372036854775807n, name: 'Monstera', tag: 'houseplant' });
const plant = await store.getPlant(9223372036854775807n);
let plain;
try {
  plain = JSON.stringify(plant);
} catch (error) {
  plain = error.constructor.name;
}
const text = stringifyJson(plant);
console.log(JSON.stringify({
  idType: typeof plant.id,
  plain,
  text,
  same: fromSubpath === stringifyJson,
  roundTrip: parseJson(text).id === plant.id,
}));
`;

const TYPED_CONSUMER = `
import { createPlantStoreClient, stringifyJson, type Plant } from '@plantstore/client';

const store = createPlantStoreClient({ baseUrl: 'http://127.0.0.1:1' });
export async function first(): Promise<string> {
  const plant: Plant = await store.getPlant(1n);
  const id: bigint = plant.id;
  return stringifyJson({ ...plant, id });
}
`;

describe('@plantstore/client from its packed tarball', () => {
  let h: Harness;
  let baseUrl: string;
  let client: InstalledPackage;

  before(async () => {
    h = await createHarness();
    baseUrl = await listen(h);
    client = await packAndInstall('packages/client');
  });
  after(async () => {
    client?.remove();
    await h?.close();
  });

  it('installs the client and its two dependencies, nothing of the service', () => {
    assert.deepEqual(client.installedPackages().sort(), CLIENT_PACKAGES);
  });

  it('ships built modules, declarations, its README and LICENSE, and no sources or tests', () => {
    const files = [...client.packedFiles].sort();
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/json.js', 'README.md', 'LICENSE', 'package.json'])
      assert.ok(files.includes(file), `${file} missing from ${files.join(', ')}`);
    assert.deepEqual(
      files.filter((file) => !file.startsWith('dist/') && !['README.md', 'LICENSE', 'package.json'].includes(file)),
      [],
    );
  });

  it('creates and reads an int64 id exactly from another process; stringifyJson writes what JSON.stringify cannot', async () => {
    const script = join(client.dir, 'consumer.mjs');
    writeFileSync(script, CONSUMER);
    const { stdout } = await run(process.execPath, [script], {
      cwd: client.dir,
      env: { ...process.env, BASE_URL: baseUrl, TOKEN: h.tokens.all },
    });
    assert.deepEqual(JSON.parse(stdout), {
      idType: 'bigint',
      plain: 'TypeError', // JSON.stringify has no representation for a bigint
      text: '{"id":9223372036854775807,"name":"Monstera","tag":"houseplant"}',
      same: true,
      roundTrip: true,
    });
  });

  it('type-checks a TypeScript consumer against the declarations it ships', async () => {
    writeFileSync(join(client.dir, 'consumer.ts'), TYPED_CONSUMER);
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    assert.ok(existsSync(tsc));
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--skipLibCheck', 'false'];
    const types = ['--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types')];
    await run(process.execPath, [tsc, ...args, ...types, 'consumer.ts'], { cwd: client.dir }).catch((error) => {
      assert.fail(`tsc failed on the consumer:\n${error.stdout}${error.stderr}`);
    });
  });
});
