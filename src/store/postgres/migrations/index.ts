import type { PostgresMigration } from './migration.js';
import { plantsAndTokens } from './0001-plants-and-tokens.js';
import { webhooks } from './0002-webhooks.js';
import { webhookRetention } from './0003-webhook-retention.js';
import { webhookSecretRotation } from './0004-webhook-secret-rotation.js';

/** Every migration, in version order. Add new ones at the end. */
export const postgresMigrations: readonly PostgresMigration[] = [plantsAndTokens, webhooks, webhookRetention, webhookSecretRotation];
