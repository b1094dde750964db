/**
 * The bulk cases of `npm run bench`: importing --bulk-size plants (1,000,000 by
 * default) into an empty store with POST /plants/import, then exporting them with
 * GET /plants/export, on each store, each against the floor moving the same bytes
 * (a bare server that reads the upload and throws it away, and one that streams the
 * file back). Each store gets a service of its own, so its peak RSS (the kernel's
 * high-water mark) is that of the import and the export alone.
 */
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { peakRss, startService, stop, type Running } from './processes.js';
import { prepareStore } from './stores.js';
import type { StoreName } from './options.js';
import { seededPlant } from './workload.js';

export interface BulkFigures {
  readonly store: StoreName | 'floor';
  readonly plants: number;
  readonly importSeconds: number;
  readonly exportSeconds: number;
  readonly peakRssMb: number;
}

/** NDJSON of plants 1..count (the seeded plants of the other cases), written once for every run. */
export async function writeImportFile(count: number): Promise<{ file: string; bytes: number; cleanup(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bulk-'));
  const file = join(dir, 'plants.ndjson');
  const out = createWriteStream(file);
  let text = '';
  for (let id = 1; id <= count; id++) {
    text += `${JSON.stringify(seededPlant(id))}\n`;
    if (text.length > 1 << 20 || id === count) {
      if (!out.write(text)) await once(out, 'drain');
      text = '';
    }
  }
  out.end();
  await once(out, 'finish');
  return { file, bytes: statSync(file).size, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

interface Exchange {
  readonly status: number;
  readonly body: string;
  readonly bytes: number;
  readonly seconds: number;
}

/** One request; the upload streamed from `file`, the answer read and counted (kept only when short). */
function exchange(
  server: Running,
  method: string,
  path: string,
  token: string | undefined,
  file?: string,
): Promise<Exchange> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      'content-type': 'application/x-ndjson',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    };
    const req = request(`${server.url}${path}`, { method, headers }, (res) => {
      let bytes = 0;
      let body = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (body.length < 4096) body += chunk.toString();
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, bytes, seconds: (performance.now() - started) / 1000 }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (file === undefined) req.end();
    else createReadStream(file).pipe(req);
  });
}

/** Imports the file into a fresh empty store, then exports it; checks both answers. */
export async function benchBulk(
  store: StoreName,
  postgresUrl: string,
  input: { file: string; count: number },
  logFile: string,
  logLevel: string,
): Promise<BulkFigures | string> {
  const prepared = await prepareStore(store, 0, postgresUrl);
  if ('skipped' in prepared) return `${store}: bulk skipped: ${prepared.skipped}`;
  // Long enough for a million lines on a slow machine: the body must arrive within REQUEST_TIMEOUT_MS.
  const service = await startService({
    databaseUrl: prepared.databaseUrl,
    logLevel,
    logFile,
    env: { REQUEST_TIMEOUT_MS: '600000' },
  });
  try {
    const imported = await exchange(service, 'POST', '/plants/import', prepared.token, input.file);
    const expected = JSON.stringify({ created: input.count, unchanged: 0, skipped: 0, problems: [] });
    if (imported.status !== 200 || imported.body !== expected)
      throw new Error(`${store}: import answered ${imported.status} ${imported.body.slice(0, 300)}`);
    const exported = await exchange(service, 'GET', '/plants/export', prepared.token);
    const lines = exported.status === 200 ? exported.bytes : -1;
    if (lines !== statSync(input.file).size)
      throw new Error(
        `${store}: export answered ${exported.status}, ${exported.bytes} bytes, not the ${statSync(input.file).size} imported`,
      );
    return {
      store,
      plants: input.count,
      importSeconds: imported.seconds,
      exportSeconds: exported.seconds,
      peakRssMb: peakRss(service.child.pid as number),
    };
  } finally {
    await stop(service);
    await prepared.cleanup();
  }
}

/** The floor moving the same bytes: an upload read and dropped, a download of the file. */
export async function floorBulk(floor: Running, input: { file: string; count: number }): Promise<BulkFigures> {
  const uploaded = await exchange(floor, 'POST', '/bulk-sink', undefined, input.file);
  const downloaded = await exchange(floor, 'GET', `/bulk-source?file=${encodeURIComponent(input.file)}`, undefined);
  if (uploaded.status !== 200 || downloaded.status !== 200)
    throw new Error(`floor: bulk answered ${uploaded.status} and ${downloaded.status}`);
  return {
    store: 'floor',
    plants: input.count,
    importSeconds: uploaded.seconds,
    exportSeconds: downloaded.seconds,
    peakRssMb: peakRss(floor.child.pid as number),
  };
}

export function formatBulk(rows: readonly BulkFigures[]): string {
  const rate = (seconds: number, plants: number) => Math.round(plants / seconds).toLocaleString('en-US');
  const floor = rows.find((row) => row.store === 'floor');
  const lines = [
    '| bulk | plants | import s | import plants/s | export s | export plants/s | import/floor | export/floor | peak RSS MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const ratio = (mine: number, theirs: number | undefined) =>
      theirs === undefined ? '' : (theirs / mine).toFixed(2);
    lines.push(
      `| ${row.store} | ${row.plants} | ${row.importSeconds.toFixed(2)} | ${rate(row.importSeconds, row.plants)} | ${row.exportSeconds.toFixed(2)} | ` +
        `${rate(row.exportSeconds, row.plants)} | ${ratio(row.importSeconds, floor?.importSeconds)} | ${ratio(row.exportSeconds, floor?.exportSeconds)} | ${row.peakRssMb.toFixed(0)} |`,
    );
  }
  return lines.join('\n');
}
