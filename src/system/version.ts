/**
 * The service's version, read once from the package's own package.json: the same number in
 * `plantstore --version`, the start-up log, /readyz and the plantstore_info metric. Found by
 * walking up from this module, since it runs from src/ (tsx), dist/src/ (tsc) and dist/service/ (the bundle).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'plantstore';

function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && 'name' in parsed && parsed.name === PACKAGE_NAME) {
        return 'version' in parsed && typeof parsed.version === 'string' ? parsed.version : 'unknown';
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

export const SERVICE_VERSION: string = readVersion();
