/**
 * Server-Sent Events as the HTML standard defines them. A message with an `id:` and no
 * `data:` fires no event but still moves the client's last event id on. Payloads are
 * single-line JSON, so `data:` never needs splitting. An event id is `<history>-<position>`:
 * a restore or a copy starts a new history, in which old positions mean nothing.
 */
import type { PlantChangeEntry } from '../store/types.js';

export const SSE_MEDIA_TYPE = 'text/event-stream';

/** The id a client sends back (Last-Event-ID, ?after=) to resume right after this position of this history. */
export function eventId(history: string, position: bigint): string {
  return `${history}-${position}`;
}

/** The event's JSON; a change of the plant's tag also names the tag it had, `previousTag` (null for none). */
export function changeData(entry: PlantChangeEntry): string {
  if (entry.previousTag === undefined) return entry.payload;
  return `${entry.payload.slice(0, -1)},"previousTag":${JSON.stringify(entry.previousTag)}}`;
}

export function changeMessage(history: string, entry: PlantChangeEntry): string {
  return `id: ${eventId(history, entry.position)}\nevent: ${entry.type}\ndata: ${changeData(entry)}\n\n`;
}

/** Moves the client's last event id on to `position` without an event (past changes a filter left out). */
export function positionMessage(history: string, position: bigint): string {
  return `id: ${eventId(history, position)}\n\n`;
}

export function retryAdvice(ms: number): string {
  return `retry: ${ms}\n\n`;
}

export function comment(text: string): string {
  return `: ${text}\n\n`;
}

/** What a stream ended by a shutting-down server says (stream.shutdown). */
export const SHUTDOWN_DETAIL = 'the server is shutting down; reconnect to resume from lastEventId';

/** Why the server ends a stream: each is a `stream.<reason>` event. */
export const CLOSING_REASONS = ['overflow', 'shutdown', 'unauthorized'] as const;
export type ClosingReason = (typeof CLOSING_REASONS)[number];

/** The last message of a stream the server ends: why, and where to resume. */
export function closingMessage(reason: ClosingReason, history: string, lastPosition: bigint, detail: string): string {
  const data = JSON.stringify({ reason: detail, lastEventId: eventId(history, lastPosition) });
  return `event: stream.${reason}\ndata: ${data}\n\n`;
}
