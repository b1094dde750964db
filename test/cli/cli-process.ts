/** The `plantstore` command as a real process, for the CLI tests: plainly, or on a pseudo-terminal. */
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { listen } from '../client/servers.js';
import { bundledCli } from '../support/bundled-cli.js';
import { createHarness, type Harness } from '../support/harness.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** node and its arguments that run the CLI as it ships (cwd: ROOT). */
export const CLI_COMMAND = [process.execPath, await bundledCli()] as const;

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to completion; PLANTSTORE_TOKEN and PLANTSTORE_URL come only from `env`. `input` is its stdin. */
export function cli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  input?: string,
): Promise<Run> {
  return new Promise((resolve) => {
    const [node, ...nodeArgs] = CLI_COMMAND;
    const child = execFile(
      node,
      [...nodeArgs, ...args],
      {
        cwd: ROOT,
        env: { ...process.env, PLANTSTORE_TOKEN: undefined, PLANTSTORE_URL: undefined, ...env },
        timeout: 30_000,
      },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

/** Whether script(1) is there to give a command a pseudo-terminal. */
export const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The command line script(1) runs: arguments here are plain words (no spaces), so no quoting for its shell.
 * `exec` puts the CLI in the shell's place: script(1) runs $SHELL, or /bin/sh when it is unset (as under CI), and
 * dash stays as the CLI's parent, so a Ctrl-C reaches it too and it reports 130 whatever the CLI's own exit code.
 */
export function terminalCommand(args: readonly string[]): string {
  return ['exec', ...CLI_COMMAND, ...args].join(' ');
}

/**
 * Runs the CLI on a pseudo-terminal (script(1)), so stdout and stderr are a
 * terminal: its raw output, \r and escapes kept. Asynchronously: the server
 * answering it lives in the test's process.
 */
export function onTerminal(args: readonly string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'script',
      ['-qec', terminalCommand(args), '/dev/null'],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout) => (error === null ? resolve(stdout) : reject(error)),
    );
    child.stdin?.end();
  });
}

/** A service on a real port for the CLI to talk to, and the environment that gives the CLI a token of every scope. */
export interface CliServer {
  readonly h: Harness;
  readonly url: string;
  readonly env: Record<string, string>;
}

export async function cliServer(): Promise<CliServer> {
  const h = await createHarness();
  return { h, url: await listen(h), env: { PLANTSTORE_TOKEN: h.tokens.all } };
}
