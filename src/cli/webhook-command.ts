/**
 * `plantstore webhook ...`: subscriptions managed directly in the store; a running service
 * sees changes at once (it reads subscriptions on every create).
 */
import type { Command } from 'commander';
import { EVENT_TYPES, isEventType, type EventType } from '../domain/events.js';
import { PLANT_TEXT_RULES } from '../domain/plant.js';
import { stringifyJson } from '../../packages/client/src/json.js';
import { parseInt64Text } from '../http/int64.js';
import type { DeliveryStatus, Store } from '../store/types.js';
import type { SubscriptionChange } from '../store/webhook-types.js';
import { recoveryWindow, RecoveryWindowError, WebhookRecoveries } from '../webhooks/recovery.js';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS, rotateSigningSecret } from '../webhooks/secret-rotation.js';
import {
  checkDescription,
  checkMaxPerSecond,
  checkTagFilter,
  createSubscription,
  MAX_PER_SECOND_LIMIT,
  WebhookInputError,
} from '../webhooks/subscriptions.js';
import { EXISTING_STORE_HELP, withDatabaseOption, withStore, type Options } from './options.js';
import { printTable } from './table.js';

export function registerWebhookCommands(program: Command): void {
  const webhook = program
    .command('webhook')
    .description(
      'Add, list, change, throttle, disable, enable, rotate the secret of and remove webhook subscriptions, read and retry their ' +
        'deliveries and recover failed ones (in the store DATABASE_URL names). See docs/webhooks.md.',
    )
    .addHelpText('after', EXISTING_STORE_HELP);

  withDatabaseOption(
    webhook
      .command('add')
      .description('Subscribe a URL to events; prints the signing secret, once, alone on the last line.')
      .argument('<url>', 'an http(s) URL; private, loopback and link-local hosts need WEBHOOK_ALLOW_PRIVATE_URLS=true')
      .option('--description <text>', 'what the subscription is for')
      .option('--event-types <list>', `comma-separated, of ${EVENT_TYPES.join(', ')} (default plant.created)`)
      .option('--tag <tag>', TAG_HELP)
      .option(
        '--max-per-second <n>',
        `at most n deliveries started per second (1 to ${MAX_PER_SECOND_LIMIT}; default: no limit)`,
      ),
  ).action(async (url: string, options: Options) =>
    withStore(options, async (store, { webhookAllowPrivateUrls: allowPrivate }) => {
      const description = typeof options.description === 'string' ? options.description : undefined;
      const tag = typeof options.tag === 'string' ? options.tag : undefined;
      const eventTypes = typeof options.eventTypes === 'string' ? eventTypeList(options.eventTypes) : undefined;
      const maxPerSecond = options.maxPerSecond === undefined ? undefined : rateOption(options.maxPerSecond);
      const created = await createSubscription(
        store.webhooks,
        {
          url,
          ...(description === undefined ? {} : { description }),
          ...(eventTypes === undefined ? {} : { eventTypes }),
          ...(tag === undefined ? {} : { tag }),
          ...(maxPerSecond === undefined ? {} : { maxPerSecond }),
        },
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
        ['ID', 'URL', 'DESCRIPTION', 'EVENT TYPES', 'TAG', 'ENABLED', 'MAX/S', 'CREATED'],
        subscriptions.map((s) => [
          s.id,
          s.url,
          s.description ?? '-',
          s.eventTypes.join(','),
          s.tag ?? '-',
          s.enabled ? 'yes' : `no: ${s.disabledReason ?? ''}`,
          s.maxPerSecond === undefined ? '-' : String(s.maxPerSecond),
          s.createdAt.toISOString(),
        ]),
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
      .command('disable')
      .description('Disable a subscription: its events are kept and sent once it is enabled again.')
      .argument('<id>')
      .option('--reason <text>', 'recorded as disabledReason (default: disabled by hand)'),
  ).action(async (id: string, options: Options) =>
    withStore(options, async (store) => {
      const reason = typeof options.reason === 'string' ? options.reason : undefined;
      if (reason !== undefined) checkDescription(reason);
      const change = { enabled: false, ...(reason === undefined ? {} : { disabledReason: reason }) };
      await changeSubscription(store, id, change);
      process.stdout.write(`disabled webhook subscription ${id}\n`);
    }),
  );

  withDatabaseOption(
    webhook
      .command('update')
      .description('Change a subscription in place: its tag filter applies to the events written from then on.')
      .argument('<id>')
      .option('--tag <tag>', TAG_HELP)
      .option('--no-tag', 'remove the tag filter: plant events of every plant'),
  ).action(async (id: string, options: Options) =>
    withStore(options, async (store) => {
      if (options.tag === undefined) throw new WebhookInputError('give --tag <tag> or --no-tag');
      const tag = typeof options.tag === 'string' ? options.tag : null;
      if (tag !== null) checkTagFilter(tag);
      await changeSubscription(store, id, { tag });
      process.stdout.write(`updated webhook subscription ${id}\n`);
    }),
  );

  withDatabaseOption(
    webhook
      .command('throttle')
      .description('Change how many deliveries a subscription may be sent per second; "none" removes the limit.')
      .argument('<id>')
      .argument('<max-per-second>', `1 to ${MAX_PER_SECOND_LIMIT}, or none`),
  ).action(async (id: string, rate: string, options: Options) =>
    withStore(options, async (store) => {
      const maxPerSecond = rate === 'none' ? null : rateOption(rate);
      await changeSubscription(store, id, { maxPerSecond });
      process.stdout.write(
        `webhook subscription ${id}: ${maxPerSecond === null ? 'no limit' : `at most ${maxPerSecond} per second`}\n`,
      );
    }),
  );

  withDatabaseOption(
    webhook
      .command('enable')
      .description('Enable a subscription again: the deliveries it kept while disabled are sent.')
      .argument('<id>'),
  ).action(async (id: string, options: Options) =>
    withStore(options, async (store) => {
      await changeSubscription(store, id, { enabled: true });
      process.stdout.write(`enabled webhook subscription ${id}\n`);
    }),
  );

  withDatabaseOption(
    webhook
      .command('deliveries')
      .description('The delivery log of a subscription, newest first.')
      .argument('<id>')
      .option('--status <status>', 'only pending, succeeded or failed deliveries')
      .option('--plant <id>', 'only deliveries of events about this plant (its int64 id)')
      .option('--limit <n>', 'at most this many (1 to 1000)', '100')
      .option('--json', 'print JSON (with every attempt) instead of a table'),
  ).action(async (id: string, options: Options) =>
    withStore(options, async (store) => {
      const status = deliveryStatus(options.status);
      const limit = /^[0-9]{1,4}$/.test(String(options.limit)) ? Number(options.limit) : Number.NaN;
      if (!(limit >= 1 && limit <= 1000)) throw new WebhookInputError('--limit must be an integer from 1 to 1000');
      const plantId = options.plant === undefined ? undefined : parseInt64Text(String(options.plant));
      if (options.plant !== undefined && plantId === undefined)
        throw new WebhookInputError(
          '--plant must be a plant id, an integer from -9223372036854775808 to 9223372036854775807',
        );
      if ((await store.webhooks.getSubscription(id)) === undefined)
        throw new WebhookInputError(`no webhook subscription has id '${id}'`);
      const deliveries = await store.webhooks.listDeliveries(id, {
        limit,
        ...(status === undefined ? {} : { status }),
        ...(plantId === undefined ? {} : { plantId }),
      });
      if (options.json === true) {
        process.stdout.write(`${stringifyJson(deliveries, 2)}\n`);
        return;
      }
      printTable(
        ['ID', 'EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST RESULT', 'CREATED'],
        deliveries.map((d) => {
          const last = d.attempts.at(-1);
          return [
            d.id,
            d.eventId,
            d.eventType,
            d.status,
            String(d.attemptCount),
            last === undefined ? '-' : (last.error ?? String(last.responseStatus ?? '')),
            d.createdAt.toISOString(),
          ];
        }),
      );
    }),
  );

  withDatabaseOption(
    webhook
      .command('retry')
      .description('Make a delivery due now for one more attempt (a running service sends it on its next poll).')
      .argument('<id>')
      .argument('<delivery>'),
  ).action(async (id: string, deliveryId: string, options: Options) =>
    withStore(options, async (store) => {
      const delivery = await store.webhooks.retryDelivery(id, deliveryId, new Date());
      if (delivery === undefined)
        throw new WebhookInputError(`webhook subscription '${id}' has no delivery with id '${deliveryId}'`);
      process.stdout.write(`delivery ${deliveryId} is due now\n`);
    }),
  );

  withDatabaseOption(
    webhook
      .command('recover')
      .description('Make every failed delivery of events created in a window pending again (one more attempt each).')
      .argument('<id>')
      .requiredOption('--since <time>', 'RFC 3339, e.g. 2026-01-01T00:00:00Z (within WEBHOOK_RETENTION_DAYS)')
      .option('--until <time>', 'RFC 3339; default now'),
  ).action(async (id: string, options: Options) =>
    withStore(options, async (store, config) => {
      const until = typeof options.until === 'string' ? options.until : undefined;
      let window;
      try {
        window = recoveryWindow(String(options.since), until, new Date(), config.webhookRetentionDays);
      } catch (error) {
        if (error instanceof RecoveryWindowError) throw new WebhookInputError(error.message);
        throw error;
      }
      const log = {
        info: () => undefined,
        warn: (_fields: object, message: string) => process.stderr.write(`${message}\n`),
      };
      const recoveries = new WebhookRecoveries(store.webhooks, { log, nudge: () => undefined });
      const started = await recoveries.start(id, window);
      if (started === undefined) throw new WebhookInputError(`no webhook subscription has id '${id}'`);
      await recoveries.idle();
      const recovery = await store.webhooks.getRecovery(id, started.id);
      process.stdout.write(
        `recovery ${started.id}: ${recovery?.status ?? 'running'}, ${recovery?.requeued ?? 0} failed deliveries made pending\n`,
      );
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

const TAG_HELP =
  'only plant events of plants with this tag after the change or before it ' +
  `(1 to ${PLANT_TEXT_RULES.tag.maxLength} characters); other events pass`;

function eventTypeList(text: string): EventType[] {
  const types = text.split(',').map((type) => type.trim());
  const unknown = types.filter((type) => !isEventType(type));
  if (types.length === 0 || unknown.length > 0)
    throw new WebhookInputError(`--event-types takes a comma-separated list of ${EVENT_TYPES.join(', ')}`);
  return types.filter(isEventType);
}

/** A --max-per-second value: plain digits only (Number('1e3') and Number(' 5') are numbers too). */
function rateOption(value: unknown): number {
  const text = String(value);
  const rate = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  checkMaxPerSecond(rate);
  return rate;
}

function deliveryStatus(value: unknown): DeliveryStatus | undefined {
  if (value === undefined) return undefined;
  if (value === 'pending' || value === 'succeeded' || value === 'failed') return value;
  throw new WebhookInputError('--status must be pending, succeeded or failed');
}

/** Applies `change` to subscription `id` now; an unknown id is a usage error naming it. */
async function changeSubscription(store: Store, id: string, change: SubscriptionChange): Promise<void> {
  const outcome = await store.webhooks.updateSubscription(id, change, undefined, new Date());
  if (outcome.kind !== 'updated') throw new WebhookInputError(`no webhook subscription has id '${id}'`);
}
