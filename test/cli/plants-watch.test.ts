/**
 * `plantstore plants watch` run as a real process against a real listening server:
 * a line per change made while it runs (tab-separated off a terminal, spaced on
 * one), --json with exact ids, --types, --tag and --from, a refusal as a one-line
 * error, and Ctrl-C (SIGINT) ending it with exit code 0.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { listen } from '../client/servers.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { CLI_COMMAND, hasScript, ROOT, terminalCommand } from './cli-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A running command: its output so far, and how it ended. */
interface Running {
  lines(): string[];
  stderr(): string;
  /** Resolves with the output's lines once it has `count` of them matching `where` (rejects after 15 s or if it exited
   * first). */
  waitForLines(count: number, where?: (line: string) => boolean): Promise<string[]>;
  /** Resolves with the exit code, once it has exited. */
  readonly exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

const children = new Set<ChildProcess>();

function started(child: ChildProcess): Running {
  children.add(child);
  let stdout = '';
  let stderr = '';
  let done = false;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => {
    done = true;
    children.delete(child);
    return code as number | null;
  });
  // A pseudo-terminal ends lines with \r\n.
  const lines = () => stdout.replace(/\r/g, '').split('\n').slice(0, -1);
  return {
    lines,
    stderr: () => stderr,
    exited,
    kill: (signal) => child.kill(signal),
    async waitForLines(count, where = () => true) {
      const deadline = Date.now() + 15_000;
      while (lines().filter(where).length < count) {
        assert.ok(
          !done && Date.now() < deadline,
          `${lines().filter(where).length} of ${count} lines: ${JSON.stringify(stdout)} (stderr: ${stderr})`,
        );
        await sleep(20);
      }
      return lines().filter(where);
    },
  };
}

function watch(args: readonly string[], env: Record<string, string>): Running {
  const [node, ...nodeArgs] = CLI_COMMAND;
  return started(
    spawn(node, [...nodeArgs, 'plants', 'watch', ...args], {
      cwd: ROOT,
      env: { ...process.env, PLANTSTORE_URL: undefined, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

describe('plantstore plants watch', () => {
  let h: Harness;
  let url: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    h = await createHarness();
    url = await listen(h);
    env = { PLANTSTORE_TOKEN: h.tokens.read };
  });
  afterEach(async () => {
    for (const child of children) child.kill('SIGKILL');
    children.clear();
    await h.close();
  });

  const send = async (method: string, path: string, body?: string) => {
    const response = await h.request({
      method,
      url: path,
      headers: { ...bearer(h.tokens.write), ...(body === undefined ? {} : json) },
      ...(body === undefined ? {} : { payload: body }),
    });
    assert.ok(response.statusCode < 300, response.body);
  };
  const now = async () => (await h.store.changes.bounds()).last;
  /** The event id of `position` in the store's history: what a line's first column shows. */
  const idAt = async (position: bigint | number) => `${(await h.store.changes.bounds()).history}-${position}`;
  const positionOf = (line: string) => BigInt(line.split('\t')[0]?.replace(/^[0-9a-f]{16}-/, '') ?? '');

  it('prints a tab-separated line per change made while it runs, and exits 0 on SIGINT', async () => {
    const running = watch(['--url', url], env);
    // It watches from the moment it connects: create plants until one shows up.
    for (let id = 1; running.lines().length === 0; id++) {
      await send('POST', '/plants', `{"id":${id},"name":"early ${id}"}`);
      await sleep(100);
    }
    const from = await now();
    await send('POST', '/plants', '{"id":9223372036854775807,"name":"Monstera","tag":"houseplant"}');
    await send('PATCH', '/plants/9223372036854775807', '{"name":"Monstera deliciosa"}');
    await send('DELETE', '/plants/9223372036854775807');
    const lines = await running.waitForLines(3, (line) => line.includes('9223372036854775807'));
    assert.deepEqual(lines, [
      `${await idAt(from + 1n)}\tplant.created\t9223372036854775807\tMonstera\thouseplant`,
      `${await idAt(from + 2n)}\tplant.updated\t9223372036854775807\tMonstera deliciosa\thouseplant`,
      `${await idAt(from + 3n)}\tplant.deleted\t9223372036854775807\t\t`,
    ]);
    const positions = running.lines().map(positionOf);
    assert.deepEqual(
      positions,
      positions.map((_, i) => (positions[0] ?? 0n) + BigInt(i)),
      'consecutive: no gap, no repeat',
    );
    running.kill('SIGINT');
    assert.equal(await running.exited, 0, running.stderr());
    assert.equal(running.stderr(), '');
  });

  it('--json prints one object per line with exact ids and the previous tag of a change of it; --types keeps only those types', async () => {
    const running = watch(
      ['--url', url, '--json', '--types', 'plant.created,plant.updated', '--from', await idAt(await now())],
      env,
    );
    await send('POST', '/plants', '{"id":9223372036854775807,"name":"Monstera","tag":"houseplant"}');
    await send('PATCH', '/plants/9223372036854775807', '{"tag":null}');
    await send('DELETE', '/plants/9223372036854775807');
    await send('POST', '/plants', '{"id":1,"name":"Fern"}');
    assert.deepEqual(await running.waitForLines(3), [
      `{"id":"${await idAt(1)}","position":"1","type":"plant.created","plant":{"id":9223372036854775807,"name":"Monstera","tag":"houseplant"}}`,
      `{"id":"${await idAt(2)}","position":"2","type":"plant.updated","plant":{"id":9223372036854775807,"name":"Monstera"},"previousTag":"houseplant"}`,
      `{"id":"${await idAt(4)}","position":"4","type":"plant.created","plant":{"id":1,"name":"Fern"}}`,
    ]);
    running.kill('SIGINT');
    assert.equal(await running.exited, 0, running.stderr());
  });

  it('--from carries on right after an event id printed before; --tag filters', async () => {
    for (let id = 1; id <= 5; id++)
      await send('POST', '/plants', `{"id":${id},"name":"plant ${id}"${id % 2 === 0 ? ',"tag":"even"' : ''}}`);
    const all = watch(['--url', url, '--from', await idAt(2)], env);
    assert.deepEqual(
      (await all.waitForLines(3)).map((line) => `${positionOf(line)} ${line.split('\t').slice(1, 3).join(' ')}`),
      ['3 plant.created 3', '4 plant.created 4', '5 plant.created 5'],
    );
    all.kill('SIGINT');
    const even = watch(['--url', url, '--from', '0', '--tag', 'even'], env);
    await send('DELETE', '/plants/4');
    assert.deepEqual(
      (await even.waitForLines(3)).map((line) => `${positionOf(line)} ${line.split('\t').slice(1, 3).join(' ')}`),
      ['2 plant.created 2', '4 plant.created 4', '6 plant.deleted 4'],
    );
    even.kill('SIGINT');
    assert.deepEqual(await Promise.all([all.exited, even.exited]), [0, 0]);
  });

  it(
    'prints spaced lines on a terminal, and Ctrl-C ends it with 0',
    { skip: hasScript ? false : 'the script(1) command is not installed' },
    async () => {
      await send('POST', '/plants', '{"id":9223372036854775807,"name":"Monstera","tag":"houseplant"}');
      await send('DELETE', '/plants/9223372036854775807');
      const command = terminalCommand(['plants', 'watch', '--url', url, '--from', '0']);
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const running = started(child);
      assert.deepEqual(await running.waitForLines(2), [
        `${await idAt(1)}  plant.created  9223372036854775807  Monstera  houseplant`,
        `${await idAt(2)}  plant.deleted  9223372036854775807`,
      ]);
      child.stdin?.write('\x03'); // Ctrl-C, through the terminal
      assert.equal(await running.exited, 0);
    },
  );

  it('a position no longer kept fails with one line and exit code 1; a bad --types with one line and 2 (a usage mistake)', async () => {
    for (let id = 1; id <= 3; id++) await send('POST', '/plants', `{"id":${id},"name":"plant ${id}"}`);
    await h.store.changes.prune(new Date(Date.now() + 60_000), 1000);
    const expired = watch(['--url', url, '--from', await idAt(1)], env);
    assert.equal(await expired.exited, 1);
    assert.match(
      expired.stderr(),
      /^plantstore: the changes after 1 are no longer kept .*\(HTTP 410, error 41001\)\n$/,
    );
    const badType = watch(['--url', url, '--types', 'plant.eaten'], env);
    assert.equal(await badType.exited, 2);
    assert.match(
      badType.stderr(),
      /^plantstore plants watch: .*'plant\.eaten' is not one of plant\.created, plant\.updated, plant\.deleted; see plantstore plants watch --help\n$/,
    );
  });
});
