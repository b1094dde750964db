/**
 * The service as a real process (`plantstore serve`), for what only a process can
 * show: persistence across kill -9, the first-start banner, signals, logs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { bundledCli } from './bundled-cli.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** Node's arguments before the CLI's own: the CLI from source, under tsx (found from here, so any cwd works). */
const FROM_SOURCE: readonly string[] = ['--import', import.meta.resolve('tsx'), CLI];

/** The CLI from source, with extra flags for Node (or V8) before it. */
export function fromSource(...nodeFlags: string[]): CliCommand {
  return { nodeArgs: [...nodeFlags, ...FROM_SOURCE] };
}

/** Which `plantstore` to run: the bundle as it ships (the default), from source, or a build's entry file. */
export interface CliCommand {
  /** Node's arguments before the CLI's own, e.g. `[bundle.js]`. */
  readonly nodeArgs?: readonly string[];
  /** The node binary; the one running the tests by default. */
  readonly executable?: string;
}

// Service processes still running. A test that fails before stopping its service must
// not leave it behind: its pipes would keep the test file (and npm test) from ever
// finishing. So once the file's tests are done, whatever still runs is killed.
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill('SIGKILL');
});
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface ServiceProcess {
  readonly child: ChildProcess;
  /** e.g. http://127.0.0.1:43210 */
  readonly url: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code (or the signal's name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Where and as whom the CLI runs (the test's own folder and user by default). */
export interface CliProcessOptions {
  readonly cwd?: string;
  readonly uid?: number;
  readonly gid?: number;
  /** Kill it (SIGTERM) after this many ms: a command expected to fail must not hang the suite when it does not. */
  readonly timeout?: number;
}

/** Runs the CLI with the given arguments to completion. */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
  command: CliCommand = {},
  options: CliProcessOptions = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const nodeArgs = command.nodeArgs ?? [await bundledCli()];
  const child = spawn(command.executable ?? process.execPath, [...nodeArgs, ...args], {
    ...options,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, stdout, stderr };
}

/** Not a speed target: starting the service takes several seconds on a busy machine. */
const START_BOUND_MS = 60_000;

/** Starts `plantstore serve` on a free port and resolves once it accepts requests. */
export async function startServiceProcess(
  env: Record<string, string>,
  command: CliCommand = {},
  timeoutMs = START_BOUND_MS,
): Promise<ServiceProcess> {
  const nodeArgs = command.nodeArgs ?? [await bundledCli()];
  const child = spawn(process.execPath, [...nodeArgs, 'serve'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  running.add(child);
  const exited = once(child, 'exit');
  void exited.then(() => running.delete(child));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`service did not start within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += String(chunk);
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`service exited before listening:\n${output}`));
    });
  });
  return {
    child,
    url,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? String(child.signalCode);
      child.kill(signal);
      const [code, killedBy] = (await exited) as [number | null, NodeJS.Signals | null];
      return code ?? String(killedBy);
    },
  };
}
