/**
 * The console's prebuilt files (scripts/build-console.ts writes them to dist/console/), read once on the first
 * request and kept in memory with their precompressed forms: a few tens of kilobytes in all.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleFile {
  readonly type: string;
  readonly identity: Buffer;
  readonly gzip: Buffer;
  readonly brotli: Buffer;
  readonly etag: string;
}

/** Where the build is, seen from this module: the bundle (dist/service), tsc's output (dist/src/console) or source. */
const CANDIDATES = ['../console/', '../../console/', '../../dist/console/'].map((relative) =>
  fileURLToPath(new URL(relative, import.meta.url)),
);

export function findConsoleBuild(): string | undefined {
  return CANDIDATES.find((dir) => existsSync(join(dir, 'manifest.json')));
}

export function loadConsoleFiles(dir: string): Map<string, ConsoleFile> {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { files: Record<string, string> };
  const files = new Map<string, ConsoleFile>();
  for (const [name, type] of Object.entries(manifest.files)) {
    const identity = readFileSync(join(dir, name));
    files.set(name, {
      type,
      identity,
      gzip: readFileSync(join(dir, `${name}.gz`)),
      brotli: readFileSync(join(dir, `${name}.br`)),
      // Hashed names change with their content; the page's ETag is its length and a cheap checksum.
      etag: `"${identity.length.toString(36)}-${checksum(identity)}"`,
    });
  }
  return files;
}

function checksum(bytes: Buffer): string {
  let hash = 0;
  for (const byte of bytes) hash = (Math.imul(hash, 31) + byte) | 0;
  return (hash >>> 0).toString(36);
}
