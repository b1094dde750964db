/**
 * What a newcomer waits for (the README's quick start): a clone of this repository's HEAD, `npm ci`,
 * then `npm start` until /healthz answers 200 (its first start builds) and until the first
 * POST /plants with the banner's token answers 200; then restarts of the built clone, `npm start`
 * to /healthz 200, the median of several. npm's cache is as this machine has it (warm after any
 * earlier install), so `npm ci` here is the second install of a machine, not the first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ROOT } from './processes.js';
import { median } from './report.js';

const RESTARTS = 5;

/**
 * The environment without what `npm run bench` adds for its own script (the package, the lifecycle,
 * npm's local prefix): left in, the clone's npm would act on this checkout instead. npm's settings
 * (its cache, nodedir) stay.
 */
const NEWCOMER_ENV = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !/^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|npm_command$|INIT_CWD$)/.test(name),
  ),
);
const LIMIT_MS = 300_000;

export interface FirstRunFigures {
  readonly cloneMs: number;
  readonly installMs: number;
  /** `npm start` on the fresh clone (build included) to the first /healthz 200. */
  readonly firstHealthyMs: number;
  /** From the clone's start to the first POST /plants answered 200. */
  readonly cloneToCreateMs: number;
  /** `npm start` on the built clone to /healthz 200, each restart. */
  readonly restartMs: readonly number[];
}

function timed(command: string, args: string[], cwd: string): number {
  const started = performance.now();
  const result = spawnSync(command, args, { cwd, env: NEWCOMER_ENV, stdio: ['ignore', 'ignore', 'inherit'] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status})`);
  return performance.now() - started;
}

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly healthyMs: number;
  output(): string;
}

/** `npm start` in its own process group, until /healthz answers 200. */
async function npmStart(cwd: string, databaseUrl: string): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd,
    env: { ...NEWCOMER_ENV, PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += String(chunk)));
  child.stderr?.on('data', (chunk) => (output += String(chunk)));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    if (performance.now() - started > LIMIT_MS) {
      await stopGroup(child); // not left running after the bench
      throw new Error(`npm start: no /healthz 200 in time:\n${output}`);
    }
    const healthy = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) return { child, url, healthyMs: performance.now() - started, output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function stopGroup(child: ChildProcess): Promise<void> {
  // A child killed by a signal has a signalCode and no exitCode; its 'exit' has been and will not come again.
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-(child.pid as number), 'SIGTERM');
  await exited;
}

export async function benchFirstRun(log: (message: string) => void): Promise<FirstRunFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-first-run-'));
  const clone = join(dir, 'plantstore');
  const databaseUrl = `sqlite:${join(dir, 'data', 'plantstore.db')}`;
  let running: ChildProcess | undefined;
  try {
    const started = performance.now();
    log(`first run: git clone of HEAD into ${clone}`);
    const cloneMs = timed('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], dir);
    log('first run: npm ci');
    const installMs = timed('npm', ['ci', '--no-audit', '--no-fund'], clone);
    log('first run: npm start (builds), then the banner token creates a plant');
    const first = await npmStart(clone, databaseUrl);
    running = first.child;
    const token = /^ {4}(pst_[A-Za-z0-9_-]{43})$/m.exec(first.output())?.[1];
    if (token === undefined) throw new Error(`no token in the first start's banner:\n${first.output()}`);
    const created = await fetch(`${first.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"id":1,"name":"Monstera"}',
    });
    if (created.status !== 200) throw new Error(`POST /plants answered ${created.status}`);
    const cloneToCreateMs = performance.now() - started;
    await stopGroup(first.child);
    const restartMs: number[] = [];
    for (let i = 0; i < RESTARTS; i++) {
      const again = await npmStart(clone, databaseUrl);
      running = again.child;
      restartMs.push(again.healthyMs);
      await stopGroup(again.child);
    }
    return { cloneMs, installMs, firstHealthyMs: first.healthyMs, cloneToCreateMs, restartMs };
  } finally {
    if (running !== undefined) await stopGroup(running);
    rmSync(dir, { recursive: true, force: true });
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export function formatFirstRun(figures: FirstRunFigures): string {
  return [
    '| first run | time |',
    '|---|---|',
    `| git clone | ${seconds(figures.cloneMs)} |`,
    `| npm ci | ${seconds(figures.installMs)} |`,
    `| first npm start (build included) to /healthz 200 | ${seconds(figures.firstHealthyMs)} |`,
    `| clone to the first POST /plants 200 | ${seconds(figures.cloneToCreateMs)} |`,
    `| npm start of the built clone to /healthz 200 (median of ${figures.restartMs.length}; ${figures.restartMs
      .map((ms) => (ms / 1000).toFixed(2))
      .join(', ')}) | ${seconds(median(figures.restartMs))} |`,
  ].join('\n');
}

if (process.argv[1] === import.meta.filename) {
  const figures = await benchFirstRun((message) => process.stderr.write(`bench: ${message}\n`));
  process.stdout.write(`${formatFirstRun(figures)}\n`);
}
