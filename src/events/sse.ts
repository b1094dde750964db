/**
 * Server-Sent Events as the HTML standard defines the stream format: a message is
 * `id:`, `event:` and `data:` lines ended by a blank line; a line starting with a
 * colon is a comment (a heartbeat); `retry:` advises how long to wait before
 * reconnecting. A message with an `id:` and no `data:` fires no event but still
 * moves the client's last event id on (EventSource sends it back on reconnect).
 * Payloads are single-line JSON, so `data:` never needs splitting.
 */
import type { PlantChangeEntry } from '../store/types.js';

export const SSE_MEDIA_TYPE = 'text/event-stream';

export function changeMessage(entry: PlantChangeEntry): string {
  return `id: ${entry.position}\nevent: ${entry.type}\ndata: ${entry.payload}\n\n`;
}

/** Moves the client's last event id on to `position` without an event (past changes a filter left out). */
export function positionMessage(position: bigint): string {
  return `id: ${position}\n\n`;
}

export function retryAdvice(ms: number): string {
  return `retry: ${ms}\n\n`;
}

export function comment(text: string): string {
  return `: ${text}\n\n`;
}

/** What a stream ended by a shutting-down server says (stream.shutdown). */
export const SHUTDOWN_DETAIL = 'the server is shutting down; reconnect to resume from lastEventId';

/** The last message of a stream the server ends: why, and where to resume. */
export function closingMessage(reason: 'overflow' | 'shutdown' | 'unauthorized', lastEventId: bigint, detail: string): string {
  return `event: stream.${reason}\ndata: ${JSON.stringify({ reason: detail, lastEventId: lastEventId.toString() })}\n\n`;
}
