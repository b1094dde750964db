/**
 * How long a durable write takes on this machine's disk: 4 KB appended and
 * fdatasync'd, as a commit to SQLite's WAL is. It bounds what any durable create
 * can do here (group commit shares one fsync among many creates, but a create
 * still waits for one), and on a shared disk its tail moves with the neighbours.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FsyncLatency {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export function probeFsync(samples = 300): FsyncLatency {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bench-fsync-'));
  const fd = openSync(join(dir, 'probe'), 'w');
  const block = Buffer.alloc(4096, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      writeSync(fd, block);
      fdatasyncSync(fd);
      times.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor((times.length * p) / 100))] as number;
  return { p50: at(50), p99: at(99), max: times[times.length - 1] as number };
}
