/**
 * Migration steps whose data SQL cannot compute, run by the service's code in the migration's transaction
 * (migrator.ts), reading and writing by id in chunks so memory stays flat.
 * 7: the find columns, folded by search-text.ts as plant writes fold them (indexed after, in 0008).
 * 13: the same columns refolded (lower case now after decomposition); only changed rows are written back, in
 * one UPDATE from the temp table 0013 made, so a store where nothing changes is only read.
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
    const ids: string[] = [],
      keys: string[] = [],
      nameWords: string[] = [],
      tagWords: string[] = [];
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

interface StoredColumns {
  readonly id_text: string;
  readonly name: string;
  readonly tag: string | null;
  readonly name_key: string;
  readonly name_words: string;
  readonly tag_words: string;
}

async function refoldFindColumns(client: pg.Client): Promise<void> {
  let after: string | null = null;
  for (;;) {
    const { rows }: pg.QueryResult<StoredColumns> = await client.query<StoredColumns>(
      `SELECT id::text AS id_text, name, tag, name_key, name_words, tag_words FROM plants
        WHERE $1::int8 IS NULL OR id > $1::int8 ORDER BY id LIMIT $2`,
      [after, CHUNK],
    );
    if (rows.length === 0) break;
    const ids: string[] = [],
      keys: string[] = [],
      nameWords: string[] = [],
      tagWords: string[] = [];
    for (const row of rows) {
      const columns = findColumns(row.name, row.tag);
      if (
        columns.nameKey === row.name_key &&
        columns.nameWords === row.name_words &&
        columns.tagWords === row.tag_words
      )
        continue;
      ids.push(row.id_text);
      keys.push(columns.nameKey);
      nameWords.push(columns.nameWords);
      tagWords.push(columns.tagWords);
    }
    if (ids.length > 0) {
      await client.query(
        'INSERT INTO refolded_plants SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[])',
        [ids, keys, nameWords, tagWords],
      );
    }
    after = rows[rows.length - 1]?.id_text ?? null;
  }
  await client.query(
    `UPDATE plants SET name_key = r.name_key, name_words = r.name_words, tag_words = r.tag_words
      FROM refolded_plants AS r WHERE plants.id = r.id`,
  );
}

export const POSTGRES_DATA_STEPS: ReadonlyMap<number, DataStep> = new Map([
  [7, fillFindColumns],
  [13, refoldFindColumns],
]);
