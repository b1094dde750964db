/**
 * Rotating a subscription's signing secret (route and CLI). The replaced secret keeps signing
 * beside the new one for the overlap, so the receiver can switch without refusing anything.
 */
import type { WebhookStore } from '../store/types.js';
import { generateSigningSecret, WebhookInputError } from './subscriptions.js';

export const DEFAULT_OVERLAP_SECONDS = 86_400;
/** A week: long enough for any deploy, short enough that a leaked old secret dies. */
export const MAX_OVERLAP_SECONDS = 7 * 86_400;

export interface RotatedSecret {
  readonly secret: string;
  /** When the previous secret stops signing; undefined when it stopped at once. */
  readonly previousSecretExpiresAt?: Date;
}

/** The check the HTTP schema makes, for callers without one (the CLI). */
export function checkOverlapSeconds(overlapSeconds: number): void {
  if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_OVERLAP_SECONDS) {
    throw new WebhookInputError(
      `the overlap must be a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS} (7 days)`,
    );
  }
}

/** Undefined when the subscription does not exist. */
export async function rotateSigningSecret(
  store: WebhookStore,
  id: string,
  overlapSeconds = DEFAULT_OVERLAP_SECONDS,
  now = new Date(),
): Promise<RotatedSecret | undefined> {
  checkOverlapSeconds(overlapSeconds);
  const secret = generateSigningSecret();
  // No overlap: the store keeps no previous secret at all, rather than one already expired.
  const previousSecretExpiresAt = overlapSeconds === 0 ? undefined : new Date(now.getTime() + overlapSeconds * 1000);
  if (!(await store.rotateSecret(id, secret, previousSecretExpiresAt))) return undefined;
  return previousSecretExpiresAt === undefined ? { secret } : { secret, previousSecretExpiresAt };
}
