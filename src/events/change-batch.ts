/**
 * A batch of consecutive log entries, each SSE message built once for all streams and the
 * whole encoded once: with a thousand streams, doing it per stream cost more than writing.
 */
import { isPlantEventType } from '../domain/events.js';
import type { PlantChangeEntry } from '../store/types.js';
import { changeMessage } from './sse.js';

export class ChangeBatch {
  readonly messages: readonly string[];
  /** Whether it holds an operational event, which a stream without `types` leaves out. */
  readonly operational: boolean;
  private encoded: Buffer | undefined;

  constructor(
    readonly entries: readonly PlantChangeEntry[],
    /** The change log's history, for the event ids. */
    history: string,
  ) {
    this.messages = entries.map((entry) => changeMessage(history, entry));
    this.operational = entries.some((entry) => !isPlantEventType(entry.type));
  }

  get first(): bigint {
    return (this.entries[0] as PlantChangeEntry).position;
  }

  get last(): bigint {
    return (this.entries.at(-1) as PlantChangeEntry).position;
  }

  /** Every message, in order, as UTF-8: one Buffer shared by every stream it is written to. */
  get bytes(): Buffer {
    this.encoded ??= Buffer.from(this.messages.join(''));
    return this.encoded;
  }
}
