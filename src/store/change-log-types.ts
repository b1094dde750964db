/**
 * What the live change stream (src/events/) needs from a store: the change log, written in each change's
 * transaction (migration 0009), read by position, and a signal when changes commit. Positions are
 * consecutive in commit order on both stores, so a stream resumes exactly after position N at N + 1.
 */
import type { EventType } from '../domain/events.js';

export interface PlantChangeEntry {
  readonly position: bigint;
  readonly type: EventType;
  readonly plantId: bigint;
  /** The plant's tag (for a delete, the tag it had); null without one. */
  readonly tag: string | null;
  /** The event's JSON, as webhooks carry it. */
  readonly payload: string;
  /** Present on a change that changed the plant's tag: the tag it had (null for none). */
  readonly previousTag?: string | null;
}

export interface ChangeLogBounds {
  /**
   * The log's history, new on create, restore and copy: positions are then handed out again, so a position of
   * an earlier history must be told apart.
   */
  readonly history: string;
  /** The last position taken; 0 before the first change. */
  readonly last: bigint;
  /** The oldest position still kept; undefined when retention has pruned them all (or there were none). */
  readonly oldest: bigint | undefined;
}

export interface ChangeLog {
  /** The entries after `position`, in position order, at most `limit`. */
  after(position: bigint, limit: number): Promise<PlantChangeEntry[]>;
  bounds(): Promise<ChangeLogBounds>;
  /** Calls `listener` soon after changes commit (on PostgreSQL, any instance's), one call for several maybe. */
  watch(listener: () => void): () => void;
  /** Deletes up to `limit` of the entries made before `before`; resolves with how many it deleted. */
  prune(before: Date, limit: number): Promise<number>;
}
