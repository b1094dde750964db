/**
 * Waiting for an outcome rather than for a fixed time: a test that sleeps a guessed
 * number of milliseconds passes or fails with the machine's load.
 */

/** Not a speed target: far above what any awaited outcome takes on a busy machine; a hang fails rather than stalls. */
export const WAIT_BOUND_MS = 60_000;

/** Resolves once `condition()` holds (checked every `everyMs`), or rejects naming `what` after `boundMs`. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  boundMs = WAIT_BOUND_MS,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not so after ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
