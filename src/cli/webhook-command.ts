/**
 * `plantstore webhook ...`: subscriptions managed directly in the store; a running service
 * sees changes at once (it reads subscriptions on every create).
 */
import type { Command } from 'commander';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS, rotateSigningSecret } from '../webhooks/secret-rotation.js';
import { createSubscription, WebhookInputError } from '../webhooks/subscriptions.js';
import { EXISTING_STORE_HELP, withDatabaseOption, withStore, type Options } from './options.js';
import { printTable } from './table.js';

export function registerWebhookCommands(program: Command): void {
  const webhook = program
    .command('webhook')
    .description(
      'Add, list, rotate the secret of and remove webhook subscriptions (in the store DATABASE_URL names). See docs/webhooks.md.',
    )
    .addHelpText('after', EXISTING_STORE_HELP);

  withDatabaseOption(
    webhook
      .command('add')
      .description('Subscribe a URL to plant.created events; prints the signing secret, once, alone on the last line.')
      .argument('<url>', 'an http(s) URL; private, loopback and link-local hosts need WEBHOOK_ALLOW_PRIVATE_URLS=true')
      .option('--description <text>', 'what the subscription is for'),
  ).action(async (url: string, options: Options) =>
    withStore(options, async (store, { webhookAllowPrivateUrls: allowPrivate }) => {
      const description = typeof options.description === 'string' ? options.description : undefined;
      const created = await createSubscription(
        store.webhooks,
        description === undefined ? { url } : { url, description },
        { allowPrivate },
      );
      process.stderr.write(
        `created webhook subscription ${created.id} for ${created.url}.\n` +
          'The signing secret below is shown only now; give it to the receiver to verify webhook-signature.\n',
      );
      process.stdout.write(`${created.secret}\n`);
    }),
  );

  withDatabaseOption(
    webhook
      .command('list')
      .description('List subscriptions (never their secrets).')
      .option('--json', 'print JSON instead of a table'),
  ).action(async (options: Options) =>
    withStore(options, async (store) => {
      const subscriptions = await store.webhooks.listSubscriptions();
      if (options.json === true) {
        process.stdout.write(`${JSON.stringify(subscriptions, null, 2)}\n`);
        return;
      }
      printTable(
        ['ID', 'URL', 'DESCRIPTION', 'CREATED'],
        subscriptions.map((s) => [s.id, s.url, s.description ?? '-', s.createdAt.toISOString()]),
      );
    }),
  );

  withDatabaseOption(
    webhook
      .command('rotate-secret')
      .description(
        'Give a subscription a new signing secret; prints it, once, alone on the last line. The old one keeps signing for the overlap.',
      )
      .argument('<id>')
      .option(
        '--overlap <seconds>',
        `how long the old secret keeps signing too (0 to ${MAX_OVERLAP_SECONDS}; 0 stops it at once)`,
        String(DEFAULT_OVERLAP_SECONDS),
      ),
  ).action(async (id: string, options: Options) =>
    withStore(options, async (store) => {
      const overlap = String(options.overlap);
      // Number('') and Number('1e3') are numbers too: only plain digits are seconds.
      const overlapSeconds = /^[0-9]+$/.test(overlap) ? Number(overlap) : Number.NaN;
      const rotated = await rotateSigningSecret(store.webhooks, id, overlapSeconds);
      if (rotated === undefined) throw new WebhookInputError(`no webhook subscription has id '${id}'`);
      const expiry = rotated.previousSecretExpiresAt;
      process.stderr.write(
        `rotated the signing secret of webhook subscription ${id}; ` +
          (expiry === undefined
            ? 'the previous secret stopped at once.\n'
            : `deliveries are signed with the previous secret too until ${expiry.toISOString()}.\n`) +
          'The new signing secret below is shown only now; give it to the receiver to verify webhook-signature.\n',
      );
      process.stdout.write(`${rotated.secret}\n`);
    }),
  );

  withDatabaseOption(
    webhook
      .command('remove')
      .description('Delete a subscription with its pending deliveries and delivery log.')
      .argument('<id>'),
  ).action(async (id: string, options: Options) =>
    withStore(options, async (store) => {
      if (!(await store.webhooks.deleteSubscription(id)))
        throw new WebhookInputError(`no webhook subscription has id '${id}'`);
      process.stdout.write(`removed webhook subscription ${id}\n`);
    }),
  );
}
