/**
 * The webhook screens in headless Chromium, on each store, against a receiver that answers every attempt 500 with
 * retries scheduled: deliveries retrying after a failed attempt are counted as retrying (with what the last attempt
 * got), each delivery names its plant (the int64 id exact, and the name), a subscription's description stands apart
 * from its event list, and the Service screen says "none pending" when no delivery is pending.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { testBackends } from '../support/backends.js';
import { bearer } from '../support/harness.js';
import { browserMissing, CHROMIUM } from '../support/browser.js';
import { sleep, startReceiver, type Receiver } from '../webhooks/receiver.js';
import { startConsoleRig, type ConsoleRig } from './console-rig.js';
import { MIN_ID } from './layout-probe.js';

for (const backend of testBackends()) {
  describe(
    `console: webhook health, deliveries and backlog [${backend.name}]`,
    { skip: browserMissing ? `${CHROMIUM} is missing` : false },
    () => {
      let rig: ConsoleRig;
      let receiver: Receiver;
      let page: Page;
      let subscriptionId: string;

      before(async () => {
        rig = await startConsoleRig(backend, {
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          WEBHOOK_RETRY_SCHEDULE: '1h,1h',
          WEBHOOK_POLL_INTERVAL_MS: '100',
        });
        receiver = await startReceiver(() => 500);
        page = await rig.signedIn(rig.h.tokens.all, 412);
      });
      after(async () => {
        await rig?.close();
        await receiver?.close();
      });

      const oldest = () => page.locator('.figure', { hasText: 'Oldest pending delivery' }).locator('dd');

      it('the Service screen says "none pending" while no delivery is pending', async () => {
        await page.getByRole('button', { name: 'Service' }).click();
        await page
          .locator('.figure', { hasText: 'Webhook deliveries pending' })
          .getByText('0', { exact: true })
          .waitFor();
        assert.equal(await oldest().textContent(), 'none pending');
      });

      it('counts deliveries whose every attempt got a 500 as retrying, and names each one’s plant', async () => {
        const created = await rig.call(
          'POST',
          '/webhooks',
          JSON.stringify({
            url: `${receiver.url}/hooks/inventory`,
            description: 'inventory sync',
            eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'],
          }),
          rig.h.tokens.admin,
        );
        subscriptionId = (JSON.parse(created.body) as { id: string }).id;
        for (const plant of [`{"id":${MIN_ID},"name":"Most negative id"}`, '{"id":2,"name":"Pilea"}']) {
          await rig.call('POST', '/plants', plant);
        }
        await rig.call('DELETE', '/plants/2');
        // Each delivery has had its first attempt (a 500) recorded, and waits an hour for the next.
        for (let i = 0; i < 200; i++) {
          const log = await rig.h.request({
            method: 'GET',
            url: `/webhooks/${subscriptionId}/deliveries`,
            headers: bearer(rig.h.tokens.admin),
          });
          const deliveries = JSON.parse(log.body) as { status: string; attemptCount: number }[];
          if (deliveries.length === 3 && deliveries.every((d) => d.status === 'pending' && d.attemptCount === 1)) break;
          await sleep(50);
        }
        await page.getByRole('button', { name: 'Webhooks' }).click();
        const subscription = page.locator(`.subscription[data-webhook="${subscriptionId}"]`);
        await subscription.locator('.health', { hasText: 'of the last 3' }).waitFor();
        const health = (await subscription.locator('.health').textContent()) ?? '';
        assert.match(health, /0 failed/);
        assert.match(health, /3 retrying \(last: 500\)/);
        assert.doesNotMatch(health, /[1-9]\d* pending/);

        await subscription.getByRole('button', { name: 'Delivery log' }).click();
        const rows = subscription.locator('.deliveries tbody tr');
        await rows.nth(2).waitFor();
        const texts = await rows.allTextContents();
        assert.match(texts[0] ?? '', /plant\.deleted\s+plant 2(?! Pilea)/);
        assert.match(texts[1] ?? '', /plant\.created\s+plant 2 Pilea/);
        assert.match(texts[2] ?? '', new RegExp(`plant\\.created\\s+plant ${MIN_ID} Most negative id`));
        for (const text of texts) assert.match(text, /retrying/);
      });

      it('shows the description on a line of its own, apart from the event list', async () => {
        const subscription = page.locator(`.subscription[data-webhook="${subscriptionId}"]`);
        const description = await subscription.getByText('inventory sync').boundingBox();
        const events = await subscription.getByText('plant.created, plant.updated, plant.deleted').boundingBox();
        assert.ok(description && events);
        assert.ok(
          description.y + description.height <= events.y,
          `the description (${description.y}+${description.height}) ends above the events (${events.y})`,
        );
      });

      it('the Service screen gives the age of the oldest pending delivery once there is one', async () => {
        await page.getByRole('button', { name: 'Service' }).click();
        await oldest()
          .getByText(/^\d+ s$/)
          .waitFor();
      });

      it('threw no script error', () => {
        assert.deepEqual(rig.browser.pageErrors, []);
      });
    },
  );
}
