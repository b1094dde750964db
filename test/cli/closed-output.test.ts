/**
 * A reader that closes the pipe early (`plantstore plants list | head -3`) ends the command quietly with exit code 0,
 * for every command that writes output. Deterministic: the test is the reader, and it closes its end of the pipe
 * after the first line, while the command still has far more than a pipe's buffer (64 KiB) to write; or, for
 * commands with a few lines to say, before they have written anything.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { bearer, postPlant, type Harness } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp.js';
import { CLI_COMMAND, cliServer, ROOT } from './cli-process.js';

/** Enough plants, with long enough names, that one page of them is several times a pipe's buffer. */
const PLANTS = 1000;
const RUNS = 3;

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  readonly read: string;
}

/**
 * Runs the CLI with its stdout a pipe to this process, which closes its end at once or after the first line;
 * `meanwhile` runs once the reader has closed (to make a command that waits, like watch, write again).
 */
async function readEarly(
  args: readonly string[],
  env: Record<string, string>,
  closeAfter: 'first line' | 'nothing',
  meanwhile: () => Promise<unknown> = async () => {},
): Promise<Ended> {
  const [node, ...nodeArgs] = CLI_COMMAND;
  const child = spawn(node, [...nodeArgs, ...args], {
    cwd: ROOT,
    env: { ...process.env, PLANTSTORE_URL: undefined, PLANTSTORE_TOKEN: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let read = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'exit');
  const closed = new Promise<void>((resolve) => {
    if (closeAfter === 'nothing') {
      child.stdout.destroy();
      resolve();
      return;
    }
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      read += chunk;
      if (!read.includes('\n')) return;
      child.stdout.destroy();
      resolve();
    });
  });
  await closed;
  await meanwhile();
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  return { code, signal, stderr, read };
}

function assertQuietEnd(ended: Ended, label: string): void {
  // What the command says on stderr (a hint, a count) may still be there; no error and no stack.
  assert.doesNotMatch(ended.stderr, /EPIPE|error|^\s+at /im, `${label}: stderr ${ended.stderr}`);
  assert.deepEqual({ code: ended.code, signal: ended.signal }, { code: 0, signal: null }, label);
}

describe('plantstore commands whose reader closes the pipe early', () => {
  let h: Harness;
  let url: string;
  let env: Record<string, string>;
  before(async () => {
    ({ h, url, env } = await cliServer());
    const lines = Array.from(
      { length: PLANTS },
      (_, i) => `{"id":${i + 1},"name":"fern ${String(i).padStart(4, '0')} ${'x'.repeat(180)}","tag":"green"}\n`,
    );
    const imported = await h.request({
      method: 'POST',
      url: '/plants/import',
      headers: { ...bearer(h.tokens.write), 'content-type': 'application/x-ndjson' },
      payload: lines.join(''),
    });
    assert.equal(imported.statusCode, 200, imported.body);
  });
  after(() => h.close());

  for (const args of [
    ['plants', 'list', '--limit', '1000'],
    ['plants', 'search', 'fern', '--limit', '1000'],
    ['plants', 'search', 'fern', '--all'],
    ['plants', 'export', '--format', 'ndjson'],
    ['plants', 'export', '--format', 'csv'],
  ]) {
    it(`${args.join(' ')}: ends quietly with 0 once the reader has its first line`, async () => {
      for (let run = 0; run < RUNS; run++) {
        const ended = await readEarly([...args, '--url', url], env, 'first line');
        assert.ok(ended.read.length > 0, 'the reader had its first line');
        assertQuietEnd(ended, `run ${run + 1}`);
      }
    });
  }

  for (const args of [
    ['plants', 'list', '--limit', '2'],
    ['plants', 'list', '--limit', '1000', '--json'],
    ['plants', 'get', '1'],
  ]) {
    it(`${args.join(' ')}: ends quietly with 0 when the reader closed before it wrote`, async () => {
      for (let run = 0; run < RUNS; run++)
        assertQuietEnd(await readEarly([...args, '--url', url], env, 'nothing'), `run ${run + 1}`);
    });
  }

  it('token list and webhook list (on the store itself) end with 0 when the reader closed before they wrote', async () => {
    for (const args of [
      ['token', 'list'],
      ['webhook', 'list'],
    ]) {
      const ended = await readEarly(args, { DATABASE_URL: h.databaseUrl }, 'nothing');
      assertQuietEnd(ended, args.join(' '));
    }
  });

  it('plants watch ends with 0 at its next change once the reader has closed', async () => {
    for (let run = 0; run < RUNS; run++) {
      let made = 0;
      const change = async () => {
        made += 1;
        return (await postPlant(h, JSON.stringify({ id: 100_000 + run * 1000 + made, name: `watched ${made}` })))
          .statusCode;
      };
      // Until the command has connected and printed a first change.
      const started = setInterval(() => void change(), 200);
      try {
        const ended = await readEarly(['plants', 'watch', '--url', url], env, 'first line', async () => {
          clearInterval(started);
          assert.equal(await change(), 200);
          assert.equal(await change(), 200);
        });
        assertQuietEnd(ended, `run ${run + 1}`);
      } finally {
        clearInterval(started);
      }
    }
  });
});

/** Answers GET /healthz with its status, or undefined when nothing listens (yet, or any more). */
async function health(port: number): Promise<number | undefined> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).status;
  } catch {
    return undefined;
  }
}

describe('plantstore serve whose output pipes close', () => {
  it('keeps serving: a closed log reader is not a reason for a service to stop', async () => {
    const port = await freePort();
    const [node, ...nodeArgs] = CLI_COMMAND;
    const child = spawn(node, [...nodeArgs, 'serve', '--port', String(port)], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: `sqlite:${join(tempDir(), 'plantstore.db')}`, WORKERS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let exit: [number | null, NodeJS.Signals | null] | undefined;
    child.on('exit', (code, signal) => (exit = [code, signal]));
    // Closed before the first-start banner and the first log lines are written.
    child.stdout.destroy();
    child.stderr.destroy();
    try {
      let status: number | undefined;
      while (status === undefined && exit === undefined) {
        await delay(100);
        status = await health(port);
      }
      assert.equal(exit, undefined, 'the service is still running');
      // Each request writes an access-log line to the closed pipe.
      for (let i = 0; i < 20; i++) assert.equal(await health(port), 200, `request ${i + 1}`);
      assert.equal(exit, undefined, `the service is still running after 20 logged requests (exit ${String(exit)})`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
