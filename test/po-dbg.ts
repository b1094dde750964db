import { createHarness, postPlant } from './support/harness.js';
import { postgresBackend } from './support/backends.js';
const h = await createHarness({ backend: postgresBackend });
const ids = [-9223372036854775808n, 9223372036854775807n, ...Array.from({ length: 200 }, (_, i) => 9007199254740000n + BigInt(i))];
const replies = await Promise.all(ids.map((id) => postPlant(h, `{"id": ${id}, "name": "p${id}"}`)));
console.log(replies.filter((r) => r.statusCode !== 200).length);
const logs = h.logs().split('\n').filter((l) => l.includes('"level":50') || l.includes('rror'));
console.log(logs.slice(0, 3).join('\n').slice(0, 3000));
await h.close();
