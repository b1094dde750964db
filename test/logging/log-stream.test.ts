/**
 * The stdout log stream hands the lines of one event-loop turn to sonic-boom as one
 * write, in order, and never holds a line past the turn or past process exit.
 * (test/server/process.test.ts checks the exit path in a real service process.)
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, it } from 'node:test';
import pino from 'pino';
import { TurnBatchedStream, type LineSink } from '../../src/log-stream.js';
import { tempDir } from '../support/temp.js';

function recordingSink(): LineSink & { writes: string[]; syncFlushes: number } {
  return {
    writes: [],
    syncFlushes: 0,
    write(text: string) {
      this.writes.push(text);
      return true;
    },
    flushSync() {
      this.syncFlushes += 1;
    },
  };
}

describe('TurnBatchedStream', () => {
  it('gives the sink the lines of one turn as one write, in order, at the end of the turn', async () => {
    const sink = recordingSink();
    const stream = new TurnBatchedStream(sink);
    try {
      for (let i = 0; i < 50; i += 1) stream.write(`line ${i}\n`);
      assert.deepEqual(sink.writes, [], 'nothing written before the turn ends');
      await nextTurn();
      assert.deepEqual(sink.writes, [Array.from({ length: 50 }, (_, i) => `line ${i}\n`).join('')]);
      stream.write('later\n');
      await nextTurn();
      assert.deepEqual(sink.writes.at(-1), 'later\n');
      assert.equal(sink.writes.length, 2);
    } finally {
      stream.detach();
    }
  });

  it('flushSync hands over the pending lines at once and flushes the sink', () => {
    const sink = recordingSink();
    const stream = new TurnBatchedStream(sink);
    try {
      stream.write('a\n');
      stream.write('b\n');
      stream.flushSync();
      assert.deepEqual(sink.writes, ['a\nb\n']);
      assert.equal(sink.syncFlushes, 1);
    } finally {
      stream.detach();
    }
  });

  it('through pino and sonic-boom to a real file: every line of a burst, in order', async () => {
    const path = join(tempDir(), 'log.ndjson');
    const sink = pino.destination({ dest: path, sync: false, mkdir: true });
    await new Promise((resolve) => sink.once('ready', resolve));
    const stream = new TurnBatchedStream(sink);
    const logger = pino({ base: undefined, timestamp: false }, stream);
    try {
      const burst = 5_000;
      for (let turn = 0; turn < 5; turn += 1) {
        for (let i = 0; i < burst / 5; i += 1) logger.info({ n: turn * (burst / 5) + i }, 'request');
        await nextTurn();
      }
      // Hand over the last turn's lines, then let sonic-boom finish its writes and close.
      stream.detach();
      const closed = once(sink, 'close');
      sink.end();
      await closed;
      const numbers = readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { n: number }).n);
      assert.deepEqual(
        numbers,
        Array.from({ length: burst }, (_, i) => i),
      );
    } finally {
      stream.detach();
    }
  });
});
