/**
 * The Standard Webhooks headers of one attempt, signed with the reference library
 * (`standardwebhooks`), so what subscribers verify is exactly what the spec defines:
 * v1 = base64(HMAC-SHA256(secret, "<webhook-id>.<webhook-timestamp>.<body>")).
 *
 * The id stays the same across retries (subscribers deduplicate on it); the timestamp
 * and signature are fresh on each attempt, so a retry hours later is not refused as
 * a replay by receivers that check the timestamp's age.
 *
 * During a secret rotation's overlap the header carries two signatures, new secret's
 * first, space-separated as the spec allows: a receiver accepts the message if any
 * of them verifies, so it keeps working whichever secret it holds.
 */
import { Webhook } from 'standardwebhooks';

export const EVENT_TYPE_HEADER = 'webhook-event-type';
export const USER_AGENT = 'PlantStore-Webhooks/1.0';

export interface SignedMessage {
  readonly secret: string;
  /** The secret a rotation replaced, while its overlap lasts. */
  readonly previousSecret?: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: string;
}

export function webhookHeaders(message: SignedMessage, at: Date): Record<string, string> {
  const secrets = message.previousSecret === undefined ? [message.secret] : [message.secret, message.previousSecret];
  const signature = secrets.map((secret) => new Webhook(secret).sign(message.eventId, at, message.payload)).join(' ');
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': message.eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
    [EVENT_TYPE_HEADER]: message.eventType,
  };
}
