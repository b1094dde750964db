/**
 * Event ids carry the change log's history (`<history>-<position>`), on every store: a
 * copy into the store (`plantstore copy --replace`) starts a new history, and a client
 * resuming with an id of the one it replaced, or with a bare position as clients of
 * earlier releases kept, is refused with 410 EVENTS_HISTORY_CHANGED rather than resumed
 * silently in a history whose positions mean other changes. (`plantstore restore`:
 * test/cli/backup.test.ts.)
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { copyStore } from '../../src/store/copy/copy-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { listen } from '../client/servers.js';
import { testBackends } from '../support/backends.js';
import { createHarness, type Harness } from '../support/harness.js';
import { tempDir } from '../support/temp.js';
import { openStream, type SseMessage } from './sse-client.js';

const isChange = (message: SseMessage) => message.event?.startsWith('plant.') === true;

for (const backend of testBackends())
  describe(`GET /events across histories [${backend.name}]`, () => {
    let h: Harness;
    let url: string;
    let dir: string;
    beforeEach(async () => {
      h = await createHarness({ backend });
      url = await listen(h);
      dir = tempDir('plantstore-history-');
    });
    afterEach(async () => {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const create = async (id: number) => {
      const response = await fetch(`${url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.tokens.write}`, 'content-type': 'application/json' },
        body: `{"id":${id},"name":"plant ${id}"}`,
      });
      assert.equal(response.status, 200);
    };
    /** The copy replaces the tokens too (with the source's): the reader's token, issued again after it. */
    let reader = '';
    const refusal = async (lastEventId: string) => {
      const stream = await openStream(`${url}/events`, reader, { 'last-event-id': lastEventId });
      return { status: stream.status, record: JSON.parse(await stream.body()) as { error: number; message: string } };
    };

    it('sends ids with the history, and refuses an id of the history a copy --replace replaced, and bare positions but 0', async () => {
      const stream = await openStream(`${url}/events`, h.tokens.read);
      for (let id = 1; id <= 5; id++) await create(id);
      const seen = await stream.waitFor(5, isChange);
      stream.close();
      const history = (await h.store.changes.bounds()).history;
      assert.match(history, /^[0-9a-f]{16}$/);
      assert.deepEqual(
        seen.map((m) => m.id),
        [1, 2, 3, 4, 5].map((position) => `${history}-${position}`),
      );

      // Another store, with plants of its own, copied over this one.
      const other = join(dir, 'other.db');
      const source = SqliteStore.open({ path: other });
      for (let id = 100; id < 110; id++) await source.plants.createPlant({ id: BigInt(id), name: `other ${id}` });
      await source.close();
      assert.equal((await copyStore(`sqlite:${other}`, h.databaseUrl, { replace: true })).committed, true);
      reader = (await issueToken(h.store.tokens, { name: 'reader-after-the-copy', scopes: ['plants:read'] })).secret;

      const now = (await h.store.changes.bounds()).history;
      assert.notEqual(now, history, 'the copy started a new history');
      const stale = await refusal(`${history}-5`);
      assert.equal(stale.status, 410);
      assert.equal(stale.record.error, Errors.EVENTS_HISTORY_CHANGED.code);
      assert.match(
        stale.record.message,
        new RegExp(
          `^Last-Event-ID ${history}-5 belongs to another history of this store \\(now ${now}\\): .*Read the plants afresh`,
        ),
      );
      const bare = await refusal('3');
      assert.equal(bare.status, 410);
      assert.equal(bare.record.error, Errors.EVENTS_HISTORY_CHANGED.code);
      assert.match(bare.record.message, /^Last-Event-ID 3 is a bare position, without the history it belongs to/);

      // The new history resumes, and a bare 0 reads the log from its start.
      const fromNow = await openStream(`${url}/events?after=${now}-5`, reader);
      assert.equal(fromNow.status, 200);
      const fromStart = await openStream(`${url}/events?after=0`, reader);
      assert.equal(fromStart.status, 200);
      assert.equal((await fromStart.waitFor(1, isChange))[0]?.id, `${now}-1`);
      for (const s of [fromNow, fromStart]) s.close();
    });
  });
