/**
 * A checksum of a store's plants, computed in the same way on both sides of a copy:
 * SHA-256 over one line per plant in id order, fed chunk by chunk (never the whole
 * store in memory). Computed here, from the rows each dialect's reader returns,
 * rather than in SQL, so that two databases with different text and number
 * functions hash exactly the same bytes for the same plants.
 *
 * A line is the JSON array [id, name, tag, version, created_at] (the plant's fields in
 * PLANT_KEYS order, then the row's): ids and versions as exact decimal text, a missing
 * tag as null (so it differs from an empty one),
 * and JSON's quoting keeps any name apart from the fields around it.
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
