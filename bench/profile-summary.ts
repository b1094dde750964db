/**
 * Summarises a --cpu-prof profile (as `npm run bench -- --profile` writes them):
 * self time by function and by module, busiest first, idle excluded.
 *
 * Usage: node --import tsx bench/profile-summary.ts <file.cpuprofile> [top=30]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topText] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topText ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));

const selfMicros = new Map<number, number>();
profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

/** The module a frame belongs to: a package name, a repo path, or the VM's own bucket. */
function moduleOf(url: string, name: string): string {
  if (url === '') return `(${name})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1] as string;
  if (url.startsWith('node:')) return url;
  const local = /\/(src|bench|dist)\/(.*)$/.exec(url);
  return local === null ? url : `${local[1]}/${local[2]}`;
}

const byFunction = new Map<string, number>();
const byModule = new Map<string, number>();
let busy = 0;
for (const [id, micros] of selfMicros) {
  const { functionName, url, lineNumber } = (nodes.get(id) as ProfileNode).callFrame;
  if (functionName === '(idle)') continue;
  busy += micros;
  const module = moduleOf(url, functionName);
  const key = `${functionName || '(anonymous)'}  ${module}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
  byModule.set(module, (byModule.get(module) ?? 0) + micros);
}

const print = (title: string, entries: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [key, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(
      `${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${key}\n`,
    );
  }
};
process.stdout.write(`busy ${(busy / 1000).toFixed(0)} ms (idle excluded)\n`);
print('self time by module', byModule);
print('self time by function', byFunction);
