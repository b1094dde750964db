/**
 * Long work on the event loop, cut into short turns. An import reads its lines as
 * fast as they come: when the body is already buffered, each line is only a
 * microtask away from the next, and microtasks never let I/O in, so lines that
 * give no plant (and never wait for the store) would hold every other request for
 * as long as there are lines. The reader asks `due()` as it goes, and once a turn
 * has run TURN_MS it awaits `next()`, which lets the event loop take its timers and
 * I/O (other requests, probes) before the work goes on.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';

/** How long one turn may hold the event loop: a few milliseconds, so no other request waits longer. */
export const TURN_MS = 5;

export interface Turns {
  /** True once the current turn has run its time. */
  due(): boolean;
  /** Lets the event loop run its other work (I/O first), then starts a new turn. */
  next(): Promise<void>;
}

export function turns(turnMs = TURN_MS): Turns {
  let started = performance.now();
  return {
    due: () => performance.now() - started >= turnMs,
    async next() {
      await setImmediate();
      started = performance.now();
    },
  };
}
