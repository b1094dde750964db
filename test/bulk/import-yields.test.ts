/**
 * An import's lines, whether or not they give a plant (blank lines, lines that are
 * not JSON or not CSV, everything after the first problem of an all-or-nothing
 * import), never hold the event loop in one long stretch: the importer yields to
 * the event loop as it reads. On every backend, over a real socket, each body sent
 * at once (as a fast client does), so that it is all buffered before it is read.
 *
 * What is measured is the work the event loop did between two ticks of a 2 ms
 * timer, in CPU time of this thread: the longest such stretch against the whole
 * import's, a ratio (the idle loop's in the same run, and each stretch's wall-clock
 * time, are shown beside it). CPU time, not wall-clock time, because a busy machine
 * deschedules the process for stretches no code can shorten; CPU work is the code's.
 * Before the importer yielded, a body of junk was read in one stretch (ratio near 1).
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { createHarness } from '../support/harness.js';
import { listen } from '../client/servers.js';

/** The share of an import's CPU time one stretch between two ticks may take: its work is spread over many turns. */
const ALLOWED_SHARE = 0.4;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU time of this thread where Node has process.threadCpuUsage, else of the process, in ms. */
const threadCpu: (() => NodeJS.CpuUsage) | undefined = (process as { threadCpuUsage?: () => NodeJS.CpuUsage })
  .threadCpuUsage;

function cpuMs(): number {
  const usage = threadCpu === undefined ? process.cpuUsage() : threadCpu.call(process);
  return (usage.user + usage.system) / 1000;
}

interface Stretches {
  /** CPU time while the work ran. */
  readonly totalCpu: number;
  /** The most CPU time between two ticks of the timer: the longest the event loop was held. */
  readonly longestCpu: number;
  /** The same stretch's wall-clock time, for the message. */
  readonly longestWall: number;
}

async function stretchesDuring(work: () => Promise<unknown>): Promise<Stretches> {
  const startCpu = cpuMs();
  let lastCpu = startCpu;
  let lastWall = performance.now();
  let longestCpu = 0;
  let longestWall = 0;
  const tick = () => {
    const cpu = cpuMs();
    const wall = performance.now();
    longestCpu = Math.max(longestCpu, cpu - lastCpu);
    longestWall = Math.max(longestWall, wall - lastWall);
    lastCpu = cpu;
    lastWall = wall;
  };
  const timer = setInterval(tick, 2);
  try {
    await work();
  } finally {
    clearInterval(timer);
    tick();
  }
  return { totalCpu: cpuMs() - startCpu, longestCpu, longestWall };
}

const repeated = (count: number, line: (i: number) => string) =>
  Array.from({ length: count }, (_, i) => line(i)).join('');
const plantLine = (i: number) => `{"id":${i},"name":"plant ${i}","tag":"t"}\n`;

interface Case {
  readonly name: string;
  readonly type: string;
  readonly query: string;
  readonly body: string;
  readonly status: number;
}

const ndjson = 'application/x-ndjson';

// Each a few hundred ms of CPU, so that a 5 ms turn (or a pause of the garbage collector, up to tens of ms) is a small
// share. All but the last two are small enough to be buffered whole before the service reads them.
const CASES: readonly Case[] = [
  // All or nothing: after the first problem every line is still read, to count the problems, and nothing is staged.
  {
    name: 'lines that are not JSON (mode=all)',
    type: ndjson,
    query: '',
    body: repeated(10_000, () => 'x\n'),
    status: 400,
  },
  { name: 'blank lines', type: ndjson, query: '', body: repeated(60_000, () => '\n'), status: 200 },
  {
    name: 'records that are not CSV (mode=skip)',
    type: 'text/csv',
    query: '?mode=skip',
    body: `id,name\n${repeated(16_000, () => 'a"\n')}`,
    status: 200,
  },
  {
    name: 'plants after a first invalid line (mode=all)',
    type: ndjson,
    query: '',
    body: `{}\n${repeated(25_000, plantLine)}`,
    status: 400,
  },
  { name: 'valid lines', type: ndjson, query: '', body: repeated(25_000, plantLine), status: 200 },
];

for (const backend of testBackends())
  describe(`an import as the event loop sees it [${backend.name}]`, () => {
    it('never holds the event loop for more than a small share of its work', { timeout: 120_000 }, async (t) => {
      const h = await createHarness({ backend });
      try {
        const url = await listen(h);
        const post = async (type: string, query: string, body: string) => {
          const response = await fetch(`${url}/plants/import${query}`, {
            method: 'POST',
            headers: { 'content-type': type, authorization: `Bearer ${h.tokens.write}` },
            body,
          });
          await response.text();
          return response.status;
        };
        // Warm-up: the first import compiles the code paths and opens the store's connections.
        assert.equal(
          await post(
            'application/x-ndjson',
            '',
            repeated(2000, (i) => plantLine(-1 - i)),
          ),
          200,
        );
        const idle = await stretchesDuring(() => sleep(200));
        const measured: string[] = [`idle: longest ${idle.longestCpu.toFixed(1)} ms CPU`];
        const shares: number[] = [];
        for (const { name, type, query, body, status } of CASES) {
          let answered = 0;
          const import_ = await stretchesDuring(async () => {
            answered = await post(type, query, body);
          });
          assert.equal(answered, status, name);
          shares.push(import_.longestCpu / import_.totalCpu);
          measured.push(
            `${name}: longest ${import_.longestCpu.toFixed(1)} ms CPU (${import_.longestWall.toFixed(1)} ms wall) ` +
              `of ${import_.totalCpu.toFixed(0)} ms`,
          );
        }
        const longest = `the event loop's longest stretch of work: ${measured.join('; ')}`;
        t.diagnostic(longest);
        assert.ok(
          shares.every((share) => share <= ALLOWED_SHARE),
          longest,
        );
      } finally {
        await h.close();
      }
    });
  });
