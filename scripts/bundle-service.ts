/**
 * Bundles the `plantstore` command (the service and its CLI) into dist/service/,
 * which `npm start` and the package's bin run:
 *
 *   npm run build        # this, always (scripts/build-if-stale.mjs)
 *   npm start            # this, only when the bundle's inputs changed since it was built
 *
 * Why: most of the service's start-up was Node finding and reading modules, not
 * running them. Unbundled it opens about 565 files under node_modules (ajv alone 87)
 * and resolves each import through package.json lookups; bundled, the main thread
 * reads a handful of files, and starts in about two thirds of the time (bench/README.md,
 * "Start-up").
 *
 * The layout is flat on purpose: the SQLite writer and readers run in worker threads, which
 * src/store/sqlite/spawn-worker.ts starts from `./writer-worker.js` (`./reader-worker.js`) next to the code
 * that calls it, so that entry and every chunk must share one directory.
 *
 * Left out of the bundle, loaded from node_modules as before:
 * - better-sqlite3: a native addon, found by its own loader;
 * - modules only some processes load, on demand: Scalar's docs renderer (it embeds
 *   its own assets), pino-pretty (LOG_FORMAT=pretty), ioredis (a shared rate-limit
 *   store), pg-native (which pg only tries if asked).
 */
import { build } from 'esbuild';
import { cpSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The bundle's entry, relative to the repository (package.json's bin and start script name it). */
export const SERVICE_ENTRY = 'dist/service/plantstore.js';
/** The entry's file name inside any directory the bundle is written to. */
export const SERVICE_ENTRY_FILE = basename(SERVICE_ENTRY);
const SERVICE_DIR = join(ROOT, dirname(SERVICE_ENTRY));

const MIGRATIONS = 'src/store/migrations';

const EXTERNAL = ['better-sqlite3', '@scalar/fastify-api-reference', 'pino-pretty', 'ioredis', 'pg-native'];

/**
 * CommonJS packages bundled into an ES module still call `require` for Node's own
 * modules; an ES module has none, so each file gets one for its own location.
 */
const REQUIRE_SHIM =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

export async function bundleService(outdir: string = SERVICE_DIR): Promise<void> {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: {
      [basename(SERVICE_ENTRY_FILE, '.js')]: 'src/cli/main.ts',
      'writer-worker': 'src/store/sqlite/writer-worker.ts',
      'reader-worker': 'src/store/sqlite/reader-worker.ts',
    },
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Modules imported on demand (a store's driver, the docs app) stay in chunks of
    // their own, loaded only when asked for, as they are unbundled.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    external: EXTERNAL,
    banner: { js: REQUIRE_SHIM },
    // Stack traces name bundle lines; run with --enable-source-maps to read them as
    // source lines (docs/deploying.md). Not on by default: it costs start-up.
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  copyMigrations(outdir);
}

/** The schema's .sql files, next to the bundle: src/store/migrations.ts reads them from `./migrations/` beside it. */
export function copyMigrations(...destinations: string[]): void {
  for (const destination of destinations)
    cpSync(join(ROOT, MIGRATIONS), join(destination, 'migrations'), { recursive: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleService();
}
