/**
 * A checksum of a store's plants, the same on both sides of a copy: SHA-256 over one line per plant in id
 * order, fed chunk by chunk. Computed here rather than in SQL so that databases with different text and
 * number functions hash the same bytes. A line is the JSON array of the fields (PLANT_KEYS), version, created_at:
 * exact decimal ids and versions, a missing field as null (unlike an empty one), texts kept apart by quoting.
 */
import { createHash, type Hash } from 'node:crypto';
import { PLANT_KEYS } from '../../domain/plant.js';
import type { PlantRow } from './rows.js';

export class PlantChecksum {
  private readonly hash: Hash = createHash('sha256');

  add(plants: readonly PlantRow[]): void {
    let lines = '';
    for (const row of plants) {
      const fields = PLANT_KEYS.map((key) => (key === 'id' ? row.id.toString() : row[key]));
      lines += `${JSON.stringify([...fields, row.version.toString(), row.createdAt])}\n`;
    }
    this.hash.update(lines, 'utf8');
  }

  /** Hex; the checksum can be taken once. */
  digest(): string {
    return this.hash.digest('hex');
  }
}
