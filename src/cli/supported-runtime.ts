/**
 * The oldest Node.js line the service runs on: below it better-sqlite3 13 (Node-API 10) dies
 * with a segmentation fault at its first query, so the command refuses to start and says why,
 * and what to do where it runs: a clone of the repository brings its own Node.js 24 (`npm ci`),
 * an installed package does not.
 *
 * Runs first on whatever Node.js started it, however old: nothing newer than Node 18's APIs here.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MINIMUM_NODE_MAJOR = 22;

/** Where the running command comes from: a clone of the repository, or the package installed by npm. */
export type Installation = 'checkout' | 'package';

/** The folder of the nearest package.json named plantstore above `dir`, or undefined. */
function packageRoot(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    const manifest = join(at, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'plantstore') return at;
      } catch {
        // not a package.json we can read: go on up
      }
    }
    if (dirname(at) === at) return undefined;
  }
}

/**
 * A checkout has the sources (the package's `files` leave src/ out) and is not under node_modules (where npm
 * installs packages, npx's cache included). A checkout installed with `npm install <folder>` is a link to the
 * checkout, so its real path is the checkout's.
 */
export function installationOf(moduleFile: string): Installation {
  const root = packageRoot(dirname(realpathSync(moduleFile)));
  if (root === undefined) return 'package';
  const inNodeModules = root.split(sep).includes('node_modules');
  return !inNodeModules && existsSync(join(root, 'src', 'cli', 'main.ts')) ? 'checkout' : 'package';
}

/** How to run this command on a supported Node.js without installing one: npm's own copy of it. */
function onNpmsNode(entry: string, args: readonly string[]): string {
  const quoted = [entry, ...args].map((word) =>
    /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`,
  );
  return `npx --yes -p node@24 -- node ${quoted.join(' ')}`;
}

export interface RuntimeContext {
  readonly installation: Installation;
  /** The command's entry file and its arguments, for the command line to run it again on Node.js 24. */
  readonly entry: string;
  readonly args: readonly string[];
}

/** Why this runtime cannot run the service (and what to do), or undefined when it can. */
export function unsupportedRuntime(nodeVersion: string, context: RuntimeContext): string | undefined {
  const major = Number(nodeVersion.split('.')[0]);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  const refusal = `Node.js ${nodeVersion} is not supported: run Plant Store on Node.js 22 or 24`;
  if (context.installation === 'checkout')
    return (
      `${refusal} (in this repository, \`npm start\` and \`npm test\` use the Node.js 24 that \`npm ci\` installs, ` +
      'and `node_modules/.bin/node dist/service/plantstore.js` runs this command on it)'
    );
  return (
    `${refusal}. Install one: the official binaries (https://nodejs.org/en/download), NodeSource's packages ` +
    "(https://github.com/nodesource/distributions) or nvm (`nvm install 24`). Or run it on npm's copy of " +
    `Node.js 24, downloaded once: ${onNpmsNode(context.entry, context.args)}`
  );
}

/** The check as the `plantstore` command makes it, on the Node.js running it. */
export function runtimeProblem(moduleUrl: string): string | undefined {
  const script = process.argv[1];
  const entry = script === undefined ? fileURLToPath(moduleUrl) : realpathSync(script);
  return unsupportedRuntime(process.versions.node, {
    installation: installationOf(fileURLToPath(moduleUrl)),
    entry,
    args: process.argv.slice(2),
  });
}
