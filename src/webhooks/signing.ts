/**
 * The Standard Webhooks headers, signed with the reference library so subscribers verify
 * exactly what the spec defines. The timestamp is fresh on each attempt, so a late retry is
 * not refused as a replay; during a rotation both secrets sign, so either verifies.
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
