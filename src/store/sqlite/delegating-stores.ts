/**
 * Token and webhook stores for the main thread: reads on its connection, writes in the writer thread
 * (writer-protocol.ts). A write method added to TokenStore or WebhookStore must be declared in DelegatedWrites
 * and forwarded here; the compiler checks both.
 */
import type { WebhookBacklog } from '../webhook-types.js';
import type {
  AttemptResult,
  ClaimedDelivery,
  ClaimRequest,
  ExpectedSubscriptionVersion,
  InsertTokenOutcome,
  ListDeliveriesQuery,
  NewTokenRecord,
  NewWebhookRecovery,
  SigningKeys,
  WebhookRecovery,
  NewWebhookSubscription,
  SubscriptionChange,
  TokenRecord,
  TokenRevocation,
  TokenStore,
  UpdateSubscriptionOutcome,
  WebhookDelivery,
  WebhookStore,
  WebhookSubscription,
} from '../types.js';
import type { StoreWriter } from './store-writer.js';
import type { SqliteHealth } from './health.js';
import type { ChangeSignal } from './change-log.js';
import type { SqliteTokenStore } from './token-store.js';
import type { SqliteWebhookStore } from './webhook-store.js';

export class DelegatingTokenStore implements TokenStore {
  constructor(
    private readonly reads: SqliteTokenStore,
    private readonly writer: StoreWriter,
    private readonly health: SqliteHealth,
  ) {}

  insertToken(token: NewTokenRecord): Promise<InsertTokenOutcome> {
    return this.writer.call('tokens', 'insertToken', [token]);
  }

  revokeToken(idOrName: string, at: Date): Promise<TokenRevocation | undefined> {
    return this.writer.call('tokens', 'revokeToken', [idOrName, at]);
  }

  recordTokenUse(id: string, at: Date): Promise<void> {
    return this.writer.call('tokens', 'recordTokenUse', [id, at]);
  }

  findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined> {
    return this.health.readingLater(() => this.reads.findTokenBySecretHash(secretHash));
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.health.readingLater(() => this.reads.listTokens());
  }

  countTokens(): Promise<number> {
    return this.health.readingLater(() => this.reads.countTokens());
  }
}

export class DelegatingWebhookStore implements WebhookStore {
  constructor(
    private readonly reads: SqliteWebhookStore,
    private readonly writer: StoreWriter,
    private readonly health: SqliteHealth,
    /** Fired after a disable, whose webhook.disabled event is in the change log. */
    private readonly changed: ChangeSignal,
  ) {}

  insertSubscription(subscription: NewWebhookSubscription): Promise<void> {
    return this.writer.call('webhooks', 'insertSubscription', [subscription]);
  }

  rotateSecret(id: string, secret: string, previousSecretExpiresAt: Date | undefined): Promise<boolean> {
    return this.writer.call('webhooks', 'rotateSecret', [id, secret, previousSecretExpiresAt]);
  }

  updateSubscription(
    id: string,
    change: SubscriptionChange,
    expected: ExpectedSubscriptionVersion | undefined,
    now: Date,
  ): Promise<UpdateSubscriptionOutcome> {
    return this.writer.call('webhooks', 'updateSubscription', [id, change, expected, now]);
  }

  deleteSubscription(id: string): Promise<boolean> {
    return this.writer.call('webhooks', 'deleteSubscription', [id]);
  }

  async disableFailingSubscription(
    id: string,
    failingSince: Date,
    now: Date,
    reason: string,
  ): Promise<WebhookSubscription | undefined> {
    const disabled = await this.writer.call('webhooks', 'disableFailingSubscription', [id, failingSince, now, reason]);
    if (disabled !== undefined) this.changed.fire();
    return disabled;
  }

  claimDueDeliveries(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    return this.writer.call('webhooks', 'claimDueDeliveries', [request]);
  }

  recordAttempt(result: AttemptResult): Promise<void> {
    return this.writer.call('webhooks', 'recordAttempt', [result]);
  }

  retryDelivery(subscriptionId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | undefined> {
    return this.writer.call('webhooks', 'retryDelivery', [subscriptionId, deliveryId, now]);
  }

  pruneFinishedEvents(before: Date, limit: number): Promise<number> {
    return this.writer.call('webhooks', 'pruneFinishedEvents', [before, limit]);
  }

  listSubscriptions(): Promise<WebhookSubscription[]> {
    return this.health.readingLater(() => this.reads.listSubscriptions());
  }

  getSubscription(id: string): Promise<WebhookSubscription | undefined> {
    return this.health.readingLater(() => this.reads.getSubscription(id));
  }

  listDeliveries(subscriptionId: string, query: ListDeliveriesQuery): Promise<WebhookDelivery[]> {
    return this.health.readingLater(() => this.reads.listDeliveries(subscriptionId, query));
  }

  startRecovery(
    recovery: NewWebhookRecovery,
  ): Promise<{ readonly recovery: WebhookRecovery; readonly created: boolean } | undefined> {
    return this.writer.call('webhooks', 'startRecovery', [recovery]);
  }

  signingKeys(id: string, now: Date): Promise<SigningKeys | undefined> {
    return this.health.readingLater(() => this.reads.signingKeys(id, now));
  }

  getRecovery(subscriptionId: string, id: string): Promise<WebhookRecovery | undefined> {
    return this.health.readingLater(() => this.reads.getRecovery(subscriptionId, id));
  }

  staleRecoveries(before: Date): Promise<string[]> {
    return this.health.readingLater(() => this.reads.staleRecoveries(before));
  }

  recoverBatch(id: string, now: Date, limit: number): Promise<WebhookRecovery | undefined> {
    return this.writer.call('webhooks', 'recoverBatch', [id, now, limit]);
  }

  getDelivery(subscriptionId: string, deliveryId: string): Promise<WebhookDelivery | undefined> {
    return this.health.readingLater(() => this.reads.getDelivery(subscriptionId, deliveryId));
  }

  hasDueDeliveries(now: Date): Promise<boolean> {
    return this.health.readingLater(() => this.reads.hasDueDeliveries(now));
  }

  backlog(now?: Date): Promise<WebhookBacklog> {
    return this.health.readingLater(() => this.reads.backlog(now));
  }
}
