/**
 * Migrations whose data SQL cannot compute: the service's own code computes it, in
 * the migration's transaction, right after that migration's SQL file (migrator.ts).
 *
 * 7 (find columns): each plant's name key and words, folded by src/domain/search-text.ts
 * exactly as plant writes fold them. Read and written back by id in chunks, so memory
 * stays flat at any store size; the indexes over them come after, in 0008.
 */
import type pg from 'pg';
import { findColumns } from '../../domain/search-text.js';

type DataStep = (client: pg.Client) => Promise<void>;

const CHUNK = 10_000;

async function fillFindColumns(client: pg.Client): Promise<void> {
  let after: string | null = null;
  for (;;) {
    // Ids as decimal text (exact), under another name: ORDER BY id would otherwise sort the text.
    const { rows } = await client.query<{ id_text: string; name: string; tag: string | null }>(
      'SELECT id::text AS id_text, name, tag FROM plants WHERE $1::int8 IS NULL OR id > $1::int8 ORDER BY id LIMIT $2',
      [after, CHUNK],
    );
    if (rows.length === 0) return;
    const ids: string[] = [], keys: string[] = [], nameWords: string[] = [], tagWords: string[] = [];
    for (const { id_text: id, name, tag } of rows) {
      const columns = findColumns(name, tag);
      ids.push(id);
      keys.push(columns.nameKey);
      nameWords.push(columns.nameWords);
      tagWords.push(columns.tagWords);
    }
    await client.query(
      `UPDATE plants SET name_key = u.name_key, name_words = u.name_words, tag_words = u.tag_words
        FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[]) AS u(id, name_key, name_words, tag_words)
        WHERE plants.id = u.id`,
      [ids, keys, nameWords, tagWords],
    );
    after = ids[ids.length - 1] ?? null;
  }
}

export const POSTGRES_DATA_STEPS: ReadonlyMap<number, DataStep> = new Map([[7, fillFindColumns]]);
