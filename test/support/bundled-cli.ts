/**
 * The `plantstore` command as it ships (scripts/bundle-service.ts), bundled at most once per test file: run from
 * source through tsx, every process spent most of its start compiling. Inside the repository (test-output/ is ignored
 * by git), so that the modules the bundle leaves out are found in node_modules; readable by all, for the tests that
 * run it as another user.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleService, SERVICE_ENTRY_FILE } from '../../scripts/bundle-service.js';

const OUTPUT = fileURLToPath(new URL('../../test-output', import.meta.url));

let bundled: Promise<string> | undefined;

async function bundle(): Promise<string> {
  mkdirSync(OUTPUT, { recursive: true });
  const directory = mkdtempSync(join(OUTPUT, 'cli-'));
  process.on('exit', () => rmSync(directory, { recursive: true, force: true }));
  await bundleService(directory);
  chmodSync(directory, 0o755);
  return join(directory, SERVICE_ENTRY_FILE);
}

/** The bundle's entry file. */
export function bundledCli(): Promise<string> {
  bundled ??= bundle();
  return bundled;
}
