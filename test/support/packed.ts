/**
 * A package of this repository as a user gets it: `npm pack` (which runs its prepack build), then
 * `npm install <tarball>` into an empty folder, so that nothing from the repository's node_modules
 * is found. Dependencies come from the npm registry (or npm's cache).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from './temp.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface InstalledPackage {
  /** The folder the tarball was installed into (its node_modules holds the package). */
  readonly dir: string;
  /** The files the tarball holds, as `npm pack` listed them. */
  readonly packedFiles: readonly string[];
  /** Every package the install put under node_modules, by path (node_modules/x, node_modules/@s/y). */
  installedPackages(): string[];
  remove(): void;
}

/** Packs the root package (workspace undefined) or a workspace, then installs the tarball without dev dependencies. */
export async function packAndInstall(workspace?: string): Promise<InstalledPackage> {
  const dir = tempDir('plantstore-packed-');
  const pack = await run(
    'npm',
    ['pack', '--json', '--pack-destination', dir, ...(workspace ? ['-w', workspace] : [])],
    {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  // prepack scripts print to stdout before npm's JSON
  const listing = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('\n[') + 1)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const [tarball] = listing;
  if (tarball === undefined) throw new Error(`npm pack printed no tarball: ${pack.stdout}`);
  const app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{"name":"a-new-project","private":true,"type":"module"}\n');
  await run(
    'npm',
    ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', join(dir, tarball.filename)],
    { cwd: app, maxBuffer: 64 * 1024 * 1024 },
  );
  return {
    dir: app,
    packedFiles: tarball.files.map((file) => file.path),
    installedPackages() {
      const lock = JSON.parse(readFileSync(join(app, 'node_modules/.package-lock.json'), 'utf8')) as {
        packages: Record<string, unknown>;
      };
      return Object.keys(lock.packages).filter((path) => path.startsWith('node_modules/'));
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
