/**
 * The gauges of long-running work: open change streams and bulk jobs in flight, counted while they run
 * and back to 0 when they end, over a real socket.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listen } from '../client/servers.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('activity gauges', () => {
  let h: Harness;
  let url: string;
  before(async () => {
    h = await createHarness({ env: { METRICS_AUTH: 'none' } });
    url = await listen(h);
  });
  after(() => h.close());

  const scrape = async () => (await fetch(`${url}/metrics`)).text();
  const eventually = async (series: string, value: number) => {
    for (let i = 0; i < 200; i += 1) {
      if (sample(await scrape(), series) === value) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(sample(await scrape(), series), value, series);
  };

  it('plantstore_event_streams_open counts open streams', async () => {
    assert.equal(sample(await scrape(), 'plantstore_event_streams_open'), 0);
    const aborts = [new AbortController(), new AbortController()];
    for (const abort of aborts) {
      const response = await fetch(`${url}/events`, { headers: bearer(h.tokens.read), signal: abort.signal });
      assert.equal(response.status, 200);
    }
    await eventually('plantstore_event_streams_open', 2);
    for (const abort of aborts) abort.abort();
    await eventually('plantstore_event_streams_open', 0);
  });

  it('plantstore_bulk_jobs_in_flight counts an import while its body arrives', async () => {
    assert.equal(sample(await scrape(), 'plantstore_bulk_jobs_in_flight{kind="import"}'), 0);
    let send: (line: string | null) => void = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        send = (line) => (line === null ? controller.close() : controller.enqueue(new TextEncoder().encode(line)));
      },
    });
    const answer = fetch(`${url}/plants/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', ...bearer(h.tokens.write) },
      body,
      duplex: 'half',
    } as RequestInit);
    send('{"id":1,"name":"Aloe vera"}\n');
    await eventually('plantstore_bulk_jobs_in_flight{kind="import"}', 1);
    assert.equal(sample(await scrape(), 'plantstore_bulk_jobs_in_flight{kind="export"}'), 0);
    send(null);
    assert.equal((await answer).status, 200);
    await eventually('plantstore_bulk_jobs_in_flight{kind="import"}', 0);
  });
});
