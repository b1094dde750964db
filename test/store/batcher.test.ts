import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Batcher, type BatchPlan } from '../../src/store/core/batcher.js';
import { StoreUnavailableError } from '../../src/store/errors.js';

/** A plan whose batches are the first `size` items, sent by hand: `sent` holds them until `finish` is called. */
function manualPlan(maxInFlight: number, size = Infinity) {
  const sent: { batch: number[]; finish: () => void }[] = [];
  const plan: BatchPlan<number> = {
    maxInFlight,
    take: (queue) => queue.splice(0, size),
    send: (batch) => new Promise((finish) => sent.push({ batch, finish })),
  };
  return { plan, sent };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Batcher', () => {
  it('what queues in one turn goes as one batch; what queues meanwhile waits for a free slot', async () => {
    const { plan, sent } = manualPlan(1);
    const batcher = new Batcher(plan);
    for (const item of [1, 2, 3]) batcher.add(item);
    await turn();
    batcher.add(4);
    batcher.add(5);
    await turn();
    assert.deepEqual(
      sent.map((s) => s.batch),
      [[1, 2, 3]],
      'one batch in flight at most',
    );
    sent[0]?.finish();
    await turn();
    assert.deepEqual(
      sent.map((s) => s.batch),
      [
        [1, 2, 3],
        [4, 5],
      ],
    );
  });

  it('keeps maxInFlight batches in flight, and sends what is put back ahead of the queue', async () => {
    const { plan, sent } = manualPlan(2, 2);
    const batcher = new Batcher(plan);
    for (const item of [1, 2, 3, 4, 5, 6]) batcher.add(item);
    await turn();
    assert.deepEqual(
      sent.map((s) => s.batch),
      [
        [1, 2],
        [3, 4],
      ],
    );
    batcher.putBack([2]);
    sent[0]?.finish();
    await turn();
    assert.deepEqual(sent.at(-1)?.batch, [2, 5]);
  });

  it('counts what the owner counted', async () => {
    const batcher: Batcher<number> = new Batcher<number>({
      maxInFlight: 1,
      take: (queue) => queue.splice(0),
      send: async (batch) => batcher.counted(batch.length),
    });
    for (const item of [1, 2, 3]) batcher.add(item);
    await batcher.close();
    assert.deepEqual(batcher.stats(), { batches: 1, operations: 3 });
  });

  it('close() waits for everything accepted, then refuses new items as unavailable', async () => {
    const { plan, sent } = manualPlan(1, 1);
    const batcher = new Batcher(plan);
    batcher.add(1);
    batcher.add(2);
    let closed = false;
    const closing = batcher.close().then(() => (closed = true));
    assert.throws(() => batcher.add(3), StoreUnavailableError);
    await turn();
    sent[0]?.finish();
    await turn();
    assert.equal(closed, false, 'the second item is still in flight');
    assert.deepEqual(
      sent.map((s) => s.batch),
      [[1], [2]],
    );
    sent[1]?.finish();
    await closing;
  });

  it('abort() hands over what is in flight and queued, and ignores the late answer', async () => {
    const { plan, sent } = manualPlan(1, 1);
    const batcher = new Batcher(plan);
    batcher.add(1);
    batcher.add(2);
    await turn();
    const failed: number[][] = [];
    batcher.abort((batch) => failed.push(batch));
    assert.deepEqual(failed, [[1], [2]]);
    sent[0]?.finish();
    await turn();
    assert.equal(sent.length, 1, 'nothing left to send');
    await batcher.close();
  });
});
