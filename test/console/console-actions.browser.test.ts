/**
 * The console's destructive actions in headless Chromium, on each store: deleting a plant or a webhook subscription
 * and revoking a token each ask first (nothing happens until confirmed), then say what was done and show the list as
 * it is now, the plant count included; a token revoked from under the console (by itself or elsewhere) signs it out
 * to the sign-in screen, saying why.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { testBackends } from '../support/backends.js';
import { bearer } from '../support/harness.js';
import { browserMissing, CHROMIUM } from '../support/browser.js';
import { startConsoleRig, type ConsoleRig } from './console-rig.js';

for (const backend of testBackends()) {
  describe(
    `console: confirmations, feedback and counts [${backend.name}]`,
    { skip: browserMissing ? `${CHROMIUM} is missing` : false },
    () => {
      let rig: ConsoleRig;
      let page: Page;
      const exists = async (id: number) =>
        (await rig.h.request({ method: 'GET', url: `/plants/${id}`, headers: bearer(rig.h.tokens.read) }))
          .statusCode === 200;

      before(async () => {
        rig = await startConsoleRig(backend, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
        const lines = Array.from({ length: 15 }, (_, i) =>
          JSON.stringify({ id: i + 1, name: `Pothos ${i + 1}`, tag: 'count' }),
        );
        await rig.h.request({
          method: 'POST',
          url: '/plants/import',
          headers: { 'content-type': 'application/x-ndjson', ...bearer(rig.h.tokens.all) },
          payload: `${lines.join('\n')}\n`,
        });
        page = await rig.signedIn(rig.h.tokens.all);
      });
      after(async () => {
        await rig?.close();
      });

      it('deleting a plant asks first; once confirmed it says so and the count is the store’s again', async () => {
        await page.getByLabel('Tag', { exact: true }).fill('count');
        await page.getByText('Showing 1–15 of 15').waitFor();
        await page.getByRole('button', { name: 'Edit plant 3', exact: true }).click();
        const editor = page.locator('.editor');
        await editor.locator('#edit-name').waitFor();
        await editor.getByRole('button', { name: 'Delete', exact: true }).click();
        const confirm = editor.getByRole('group', { name: 'Delete plant 3? This cannot be undone.' });
        await confirm.waitFor();
        assert.ok(await exists(3), 'asked, not yet deleted');
        // Cancel puts the button back, focused, and deletes nothing.
        await confirm.getByRole('button', { name: 'Cancel' }).click();
        await confirm.waitFor({ state: 'detached' });
        assert.equal((await page.locator(':focus').textContent())?.trim(), 'Delete', 'focus back on Delete');
        assert.ok(await exists(3), 'cancelled, not deleted');

        await editor.getByRole('button', { name: 'Delete', exact: true }).click();
        await confirm.getByRole('button', { name: 'Yes, delete plant 3' }).click();
        await page.getByRole('status').filter({ hasText: 'Deleted plant 3.' }).waitFor();
        await page.getByText('Showing 1–14 of 14').waitFor();
        assert.equal(await exists(3), false);
        assert.equal(await page.locator('tr[data-id="3"]').count(), 0);
      });

      it('the count follows a create and an import too', async () => {
        await page.getByLabel('Id (int64)').fill('100');
        await page.getByLabel('Name', { exact: true }).fill('Created here');
        await page.getByLabel('Tag (optional)').fill('count');
        await page.getByRole('button', { name: 'Create', exact: true }).click();
        await page.getByText('Showing 1–15 of 15').waitFor();
        await page.getByLabel('CSV or NDJSON file').setInputFiles({
          name: 'more.ndjson',
          mimeType: 'application/x-ndjson',
          buffer: Buffer.from('{"id":101,"name":"Imported","tag":"count"}\n{"id":102,"name":"Also","tag":"count"}\n'),
        });
        await page.getByRole('button', { name: 'Import', exact: true }).click();
        await page.getByText('Showing 1–17 of 17').waitFor();
      });

      it('revoking a token asks first; once confirmed it says so and the list shows it revoked', async () => {
        const secret = await rig.issueToken('support-desk', ['plants:read']);
        const readWith = async () =>
          (await rig.h.request({ method: 'GET', url: '/plants?limit=1', headers: bearer(secret) })).statusCode;
        await page.getByRole('button', { name: 'Tokens' }).click();
        await page.getByRole('button', { name: 'Revoke support-desk' }).click();
        const confirm = page.getByRole('group', { name: /^Revoke support-desk\?/ });
        await confirm.waitFor();
        assert.equal(await readWith(), 200, 'asked, not yet revoked');
        await page.keyboard.press('Escape');
        await confirm.waitFor({ state: 'detached' });
        assert.equal(await readWith(), 200, 'Escape revokes nothing');

        await page.getByRole('button', { name: 'Revoke support-desk' }).click();
        await confirm.getByRole('button', { name: 'Yes, revoke support-desk' }).click();
        await page.getByRole('status').filter({ hasText: 'Revoked support-desk' }).waitFor();
        await page.locator('tr[data-token="support-desk"] .status-revoked').waitFor();
        assert.equal(await readWith(), 401);
      });

      it('revoking the token signed in with signs out to the sign-in screen, saying why', async () => {
        const secret = await rig.issueToken('operator-1');
        const own = await rig.signedIn(secret);
        await own.getByRole('button', { name: 'Tokens' }).click();
        await own.getByRole('button', { name: 'Revoke operator-1' }).click();
        await own.getByRole('group', { name: /the token you are signed in with/ }).waitFor();
        await own.getByRole('button', { name: 'Yes, revoke operator-1' }).click();
        await own.getByLabel('API token').waitFor();
        await own.getByRole('alert').getByText('you revoked the token you were signed in with (operator-1)').waitFor();
        assert.equal(await own.evaluate(() => sessionStorage.length), 0, 'the token is forgotten');
        const listed = await rig.call('GET', '/tokens', undefined, rig.h.tokens.admin);
        const tokens = JSON.parse(listed.body) as { name: string; status: string }[];
        assert.equal(tokens.find((t) => t.name === 'operator-1')?.status, 'revoked');
        await own.close();
      });

      it('a token revoked elsewhere: the next request is answered 401 and the console signs out, saying why', async () => {
        const secret = await rig.issueToken('operator-2');
        const own = await rig.signedIn(secret);
        await own.getByText(/^Showing 1–/).waitFor();
        await rig.call('DELETE', '/tokens/operator-2', undefined, rig.h.tokens.admin);
        await own.getByLabel('Search (word prefixes)').fill('pothos');
        await own.getByLabel('API token').waitFor();
        await own
          .getByRole('alert')
          .getByText('Signed out: the service no longer accepts this token (HTTP 401:')
          .waitFor();
        assert.equal(await own.evaluate(() => sessionStorage.length), 0, 'the token is forgotten');
        await own.close();
      });

      it('deleting a webhook subscription asks first; once confirmed it says so and the list is read again', async () => {
        const created = await rig.call(
          'POST',
          '/webhooks',
          JSON.stringify({ url: 'http://127.0.0.1:9/hooks/doomed', eventTypes: ['plant.created'] }),
          rig.h.tokens.admin,
        );
        const { id } = JSON.parse(created.body) as { id: string };
        await page.getByRole('button', { name: 'Webhooks' }).click();
        const subscription = page.locator(`.subscription[data-webhook="${id}"]`);
        await subscription
          .getByRole('button', { name: 'Delete the subscription of http://127.0.0.1:9/hooks/doomed' })
          .click();
        await subscription.getByRole('group', { name: /^Delete the subscription of/ }).waitFor();
        const read = () =>
          rig.h.request({ method: 'GET', url: `/webhooks/${id}`, headers: bearer(rig.h.tokens.admin) });
        assert.equal((await read()).statusCode, 200, 'asked, not yet deleted');
        await subscription.getByRole('button', { name: 'Yes, delete it' }).click();
        await page
          .getByRole('status')
          .filter({ hasText: 'Deleted the subscription of http://127.0.0.1:9/hooks/doomed.' })
          .waitFor();
        await subscription.waitFor({ state: 'detached' });
        assert.equal((await read()).statusCode, 404);
      });

      it('threw no script error', () => {
        assert.deepEqual(rig.browser.pageErrors, []);
      });
    },
  );
}
