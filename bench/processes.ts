/**
 * The bench's processes: the service (exactly as `npm start` runs it, from dist/),
 * the floor server, and one load-generator process per run; plus the service's
 * peak resident memory, from /proc.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { SERVICE_ENTRY } from '../scripts/bundle-service.js';
import type { LoadResult, LoadSpec } from './load-runner.js';

export const ROOT = join(import.meta.dirname, '..');
/** The bundled `plantstore` command (scripts/bundle-service.ts), as package.json's bin and start script run it. */
const CLI = join(ROOT, SERVICE_ENTRY);

/**
 * The node flags `npm start` gives the service (package.json's start script), so the
 * bench measures the service as it is run. Anything but `node [--flags] <cli> serve`
 * there is an error here rather than a bench that silently runs something else.
 */
function startScriptNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const match = new RegExp(`^node((?: --[\\w-]+(?:=\\S+)?)*) ${SERVICE_ENTRY.replaceAll('.', '\\.')} serve$`).exec(
    manifest.scripts.start,
  );
  if (match === null)
    throw new Error(
      `package.json's start script is not "node [--flags] ${SERVICE_ENTRY} serve": ${manifest.scripts.start}`,
    );
  return (match[1] as string).split(' ').filter(Boolean);
}
const SERVICE_NODE_FLAGS = startScriptNodeFlags();
const TSX = ['--import', 'tsx'];

export interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  /** From spawn to the first request answered. */
  readonly startupMs: number;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET' }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Polls until `url` answers 200; rejects if the process exits first or after 30 s. */
async function waitUntilAnswering(child: ChildProcess, url: string, started: number): Promise<number> {
  while (performance.now() - started < 30_000) {
    if (child.exitCode !== null) throw new Error(`process exited with code ${child.exitCode} before answering`);
    if (await answers(url)) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`${url} did not answer within 30 s`);
}

async function start(args: string[], env: NodeJS.ProcessEnv, port: number, logFile: string): Promise<Running> {
  const log = openSync(logFile, 'a');
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', log, log] });
  const url = `http://127.0.0.1:${port}`;
  const startupMs = await waitUntilAnswering(child, `${url}/healthz`, started);
  return { child, url, startupMs };
}

export interface ServiceOptions {
  readonly databaseUrl: string;
  readonly logLevel: string;
  readonly logFile: string;
  /** Directory for a --cpu-prof profile, written when the service exits. */
  readonly profileDir?: string;
  /** Another build of the service (a directory laid out like dist/); dist/ by default. */
  readonly buildDir?: string;
  /** More environment for the service's process. */
  readonly env?: Readonly<Record<string, string>>;
  /** Flags for node itself, instead of those `npm start` uses. */
  readonly nodeFlags?: readonly string[];
}

/** The plantstore entry point of a build directory (like dist/), or of this checkout's build. */
function entryOf(buildDir: string | undefined): string {
  return buildDir === undefined ? CLI : join(buildDir, relative('dist', SERVICE_ENTRY));
}

export async function startService(options: ServiceOptions): Promise<Running> {
  const port = await freePort();
  const profile = options.profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`];
  const cli = entryOf(options.buildDir);
  const env = {
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    PORT: String(port),
    LOG_LEVEL: options.logLevel,
    ...options.env,
  };
  return start([...profile, ...(options.nodeFlags ?? SERVICE_NODE_FLAGS), cli, 'serve'], env, port, options.logFile);
}

export async function startFloor(logFile: string): Promise<Running> {
  const port = await freePort();
  return start([...TSX, join(ROOT, 'bench', 'floor-server.ts'), String(port)], process.env, port, logFile);
}

/** SIGTERM (so a CPU profile gets written), then waits for the exit. */
export async function stop(running: Running): Promise<void> {
  if (running.child.exitCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGTERM');
  await exited;
}

/** Runs the plantstore CLI (of `buildDir`, by default this checkout's) against a store and returns its stdout. */
export async function cli(
  args: string[],
  databaseUrl: string,
  buildDir?: string,
  env: Readonly<Record<string, string>> = {},
): Promise<string> {
  const child = spawn(process.execPath, [entryOf(buildDir), ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`plantstore ${args.join(' ')} failed (${code}): ${err.trim()}`);
  return out;
}

/** A bench script (bench/<script>) in a process of its own, run through tsx as the load runner is. */
export function spawnBenchScript(script: string, args: readonly string[], stdio: StdioOptions): ChildProcess {
  return spawn(process.execPath, [...TSX, join(ROOT, 'bench', script), ...args], { stdio });
}

/** One load run in its own process. */
export async function runLoadProcess(spec: LoadSpec): Promise<LoadResult> {
  const child = spawn(process.execPath, [...TSX, join(ROOT, 'bench', 'load-runner.ts'), JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`load runner failed with code ${code}`);
  return JSON.parse(out) as LoadResult;
}

/**
 * CPU time (user + system, all threads) a process has used, in ms. Per request it
 * is the steadiest figure on a shared machine, where req/s also measures the
 * neighbours. (Clock ticks are 10 ms on Linux, so runs must be seconds long.)
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The kernel's own high-water mark of the resident set since the process started, in MB. */
export function peakRss(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

/** The process's resident set now (VmRSS), in MB. */
export function currentRss(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}
