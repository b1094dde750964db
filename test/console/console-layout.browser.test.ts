/**
 * The console's layout in headless Chromium at 360, 412 and 1280 px wide, on every screen (plants with the editor
 * open and the changes panel, webhooks with a delivery log and the edit form, tokens, service): the page never
 * scrolls sideways, every button is wholly inside the viewport and unclipped, and the smallest int64 id
 * (-9223372036854775808) is never broken across lines; axe-core finds nothing serious. Layout does not depend on
 * the store: one store (SQLite).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { sqliteBackend } from '../support/backends.js';
import { bearer } from '../support/harness.js';
import { browserMissing, CHROMIUM, seriousViolations } from '../support/browser.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { startConsoleRig, type ConsoleRig } from './console-rig.js';
import { measureLayout, MIN_ID, type LayoutReport } from './layout-probe.js';

const WIDTHS = [360, 412, 1280];

describe('console layout at 360, 412 and 1280 px', { skip: browserMissing ? `${CHROMIUM} is missing` : false }, () => {
  let rig: ConsoleRig;
  let receiver: Receiver;

  before(async () => {
    rig = await startConsoleRig(sqliteBackend, {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1h',
      WEBHOOK_POLL_INTERVAL_MS: '100',
    });
    receiver = await startReceiver(() => 500);
    const subscription = {
      url: `${receiver.url}/hooks/inventory-synchronisation-for-the-north-warehouse`,
      eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'],
      description: 'inventory sync for the north warehouse, owned by the plant care team',
    };
    await rig.call('POST', '/webhooks', JSON.stringify(subscription), rig.h.tokens.admin);
    const lines = [
      `{"id":${MIN_ID},"name":"Most negative id","tag":"edge"}`,
      '{"id":9223372036854775807,"name":"Largest id","tag":"edge"}',
      '{"id":1234567890123456,"name":"Sixteen digits","tag":"edge"}',
      // Long text beside the ids on the first page: the columns compete for width at every size.
      JSON.stringify({ id: -1, name: 'Monstera deliciosa '.repeat(10).trim(), tag: 'a-long-tag-'.repeat(8) }),
      ...Array.from({ length: 20 }, (_, i) =>
        JSON.stringify({ id: i + 1, name: `Philodendron erubescens Pink Princess ${i + 1}`, tag: 'variegated' }),
      ),
    ];
    await rig.h.request({
      method: 'POST',
      url: '/plants/import',
      headers: { 'content-type': 'application/x-ndjson', ...bearer(rig.h.tokens.all) },
      payload: `${lines.join('\n')}\n`,
    });
    // Every event got its first attempt (a 500): the delivery log has rows with attempts.
    await receiver.waitFor((received) => received.length >= lines.length);
    await rig.issueToken('a-token-with-a-rather-long-name-for-the-night-shift', ['plants:read']);
  });
  after(async () => {
    await rig?.close();
    await receiver?.close();
  });

  /** The layout, and axe-core's serious findings on the screen as it is (cards and confirmations included). */
  const measure = async (page: Page): Promise<LayoutReport> => {
    const report = await measureLayout(page);
    const findings = (await seriousViolations(page)).map((v) => `axe-core: ${v.id} (${v.help}), ${v.nodes} nodes`);
    return { ...report, problems: [...report.problems, ...findings] };
  };

  /** Every screen's problems, so that a failure lists them all rather than the first screen's. */
  const problemsOf = (reports: Record<string, LayoutReport>) =>
    Object.entries(reports).flatMap(([screen, report]) => [
      ...(report.buttons > 0 ? [] : [`${screen}: no button was measured`]),
      ...report.problems.map((problem) => `${screen}: ${problem}`),
    ]);

  for (const width of WIDTHS) {
    it(`${width} px: no screen scrolls sideways, clips a button or breaks an id`, async () => {
      const page: Page = await rig.signedIn(rig.h.tokens.all, width);
      const reports: Record<string, LayoutReport> = {};
      // Plants, smallest id first, its editor open, and a change to it in the changes panel.
      await page.locator('.live .state[data-state="live"]').waitFor();
      await page.getByRole('cell', { name: MIN_ID, exact: true }).waitFor();
      await page.getByRole('button', { name: `Edit plant ${MIN_ID}` }).click();
      await page.locator('#edit-name').fill(`Most negative id, renamed at ${width} px`);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.locator('.changes li', { hasText: `Most negative id, renamed at ${width} px` }).waitFor();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      reports.plants = await measure(page);
      const places = reports.plants.ids.map((id) => id.where).join('; ');
      assert.ok(reports.plants.ids.length >= 3, `the id in the table, the editor and the changes panel: ${places}`);

      await page.getByRole('button', { name: 'Webhooks' }).click();
      const subscription = page.locator('.subscription').first();
      await subscription.getByRole('button', { name: 'Delivery log' }).click();
      await subscription.locator('.deliveries tbody tr').first().waitFor();
      await subscription.getByRole('button', { name: 'Edit' }).click();
      reports.webhooks = await measure(page);

      await page.getByRole('button', { name: 'Tokens' }).click();
      await page.locator('tr[data-token="all"]').waitFor();
      await page.getByRole('button', { name: 'Revoke reader' }).click();
      reports.tokens = await measure(page);

      await page.getByRole('button', { name: 'Service' }).click();
      await page.locator('.figure', { hasText: 'Open event streams' }).getByText(/^\d+$/).waitFor();
      reports.service = await measure(page);
      await page.close();
      assert.deepEqual(problemsOf(reports), [], `at ${width} px`);
    });
  }

  it('threw no script error', () => {
    assert.deepEqual(rig.browser.pageErrors, []);
  });
});
