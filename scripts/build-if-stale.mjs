// `npm start` runs this first: it bundles the service (scripts/bundle-service.ts) and builds the console
// (scripts/build-console.ts) only when a build is missing or its inputs changed since it was built, so a built
// checkout starts at once.
// Inputs are fingerprinted by content, not by time, so a fresh checkout of the same sources does
// not rebuild. `--always` builds regardless (`npm run build`). Plain JavaScript: it runs before
// anything is built, and loads tsx and esbuild only when there is something to build.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What the bundle is made of: its sources, the bundler and the locked dependency versions. */
const INPUT_DIRS = ['src', 'packages/client/src'];
const INPUT_FILES = ['scripts/bundle-service.ts', 'scripts/build-console.ts', 'package-lock.json'];
const BUILDS = ['scripts/bundle-service.ts', 'scripts/build-console.ts'];
const OUTPUTS = [join(ROOT, 'dist/service/plantstore.js'), join(ROOT, 'dist/console/index.html')];
const STAMP = join(ROOT, 'dist/service/inputs.sha256');

function inputs() {
  const paths = [...INPUT_FILES];
  for (const dir of INPUT_DIRS)
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true }))
      if (entry.isFile()) paths.push(relative(ROOT, join(entry.parentPath, entry.name)));
  return paths.sort();
}

export function fingerprint() {
  const hash = createHash('sha256');
  for (const path of inputs())
    hash
      .update(`${path}\0`)
      .update(readFileSync(join(ROOT, path)))
      .update('\0');
  return hash.digest('hex');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = fingerprint();
  const built = existsSync(STAMP) ? readFileSync(STAMP, 'utf8').trim() : undefined;
  if (!process.argv.includes('--always') && built === wanted && OUTPUTS.every((output) => existsSync(output)))
    process.exit(0);
  process.stderr.write(built === undefined ? 'building the service bundle\n' : 'sources changed: rebuilding\n');
  for (const script of BUILDS) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, stdio: 'inherit' });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
  writeFileSync(STAMP, `${wanted}\n`);
}
