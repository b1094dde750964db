/** Run as a child process by sqlite-reader-pool.test.ts: closes the pool while a read is in flight, with nothing
 * else keeping the process alive. */
import { join } from 'node:path';
import { ReaderPool } from '../../src/store/sqlite/reader-pool.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../support/temp.js';

const path = join(tempDir(), 'plantstore.db');
const store = SqliteStore.open({ path, readers: 1 });
await store.plants.createPlant({ id: 7n, name: 'Monstera' });
await store.close();
const pool = new ReaderPool({ path, busyTimeoutMs: 50, timeLimitMs: 5000 }, 1);
await pool.call('plants', 'count', [{}]); // the thread is running
const read = pool.call('plants', 'count', [{}]);
// Nothing else keeps this process alive: if the read's answer let go of the thread, the process would end here.
await pool.close();
console.log(`closed; the read answered ${JSON.stringify(await read)}`);
