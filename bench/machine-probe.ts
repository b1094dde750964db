/**
 * How fast this machine is right now, for reading figures across days: the shared
 * machines here run the same build several times slower on some days than on others
 * (bench/README.md, "A shared machine"), which moves every absolute figure (req/s,
 * plants/s) with them. Three probes, each the median of three rounds: a fixed loop of
 * arithmetic (JavaScript alone), a 64-byte write to /dev/null (entering the kernel),
 * and one-byte round trips over a loopback TCP connection within this process (the
 * system calls, wake-ups and loopback path every request of the bench goes through).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { median } from './report.js';

export interface MachineSpeed {
  /** Milliseconds for LOOP_ITERATIONS turns of the loop. */
  readonly loopMs: number;
  /** Nanoseconds per 64-byte write to /dev/null. */
  readonly writeNs: number;
  /** Microseconds per one-byte round trip over loopback TCP. */
  readonly roundTripUs: number;
}

const LOOP_ITERATIONS = 100_000_000;
const WRITES = 200_000;
const ROUND_TRIPS = 10_000;
const ROUNDS = 3;

function loopMs(): number {
  const started = performance.now();
  let x = 0;
  for (let i = 0; i < LOOP_ITERATIONS; i++) x = (x + i * 7) % 1_000_003;
  const elapsed = performance.now() - started;
  // Using the result keeps the loop from being optimised away.
  return x < 0 ? Number.NaN : elapsed;
}

function writeNs(): number {
  const fd = openSync('/dev/null', 'w');
  const block = Buffer.alloc(64);
  try {
    const started = performance.now();
    for (let i = 0; i < WRITES; i++) writeSync(fd, block);
    return ((performance.now() - started) * 1e6) / WRITES;
  } finally {
    closeSync(fd);
  }
}

async function roundTripUs(): Promise<number> {
  const server = createServer((socket) => socket.on('data', (data) => socket.write(data)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1').setNoDelay(true);
  try {
    await once(client, 'connect');
    const started = performance.now();
    let trips = 0;
    await new Promise<void>((resolve) => {
      client.on('data', () => {
        trips += 1;
        if (trips === ROUND_TRIPS) resolve();
        else client.write('x');
      });
      client.write('x');
    });
    return ((performance.now() - started) * 1000) / ROUND_TRIPS;
  } finally {
    client.destroy();
    server.close();
  }
}

export async function probeMachine(): Promise<MachineSpeed> {
  const loops: number[] = [];
  const writes: number[] = [];
  const trips: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    loops.push(loopMs());
    writes.push(writeNs());
    trips.push(await roundTripUs());
  }
  return { loopMs: median(loops), writeNs: median(writes), roundTripUs: median(trips) };
}
