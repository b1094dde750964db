/**
 * Long work on the event loop, cut into short turns. When an import's body is already
 * buffered, each line is only a microtask from the next, and microtasks never let I/O in:
 * once a turn has run TURN_MS, `next()` lets timers and other requests in.
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
