/**
 * Keeping the search index (plants_search, FTS5, migration 0008) in step with a transaction's plant writes:
 * the writes note what they indexed and unindexed, and the index gets them in two statements at the end.
 *
 * Not triggers (migration 0010 dropped them): FTS5 flushes pending terms at every statement savepoint, so a
 * trigger made each write its own one-row segment, plus merging (bench/README.md, "One write, one segment").
 * Here a batch is one segment: removals and additions in id order, a plant's removal before its addition
 * (FTS5 starts a new segment whenever an id goes backwards).
 *
 * An external-content FTS5 index must be told exactly the words it was given, so a removal names the words
 * stored in the row, never ones folded again (the folding may change between releases).
 */
import type Database from 'better-sqlite3';
import { wordsColumnsSql } from '../../domain/plant-find-sql.js';
import type { PlantRecord } from '../../domain/plant.js';
import { SEARCHED_FIELDS, WORDS_COLUMNS, type PlantWords, type WordsColumn } from '../../domain/search-text.js';

/** A plant's words as its row stores them (src/domain/search-text.ts), by column. */
export type IndexedWords = PlantWords;

/** A plant's words in the index before a transaction and after it (null: none). */
interface WordsChange {
  readonly before: IndexedWords | null;
  after: IndexedWords | null;
}

/** One row the index is told to remove or to add. */
interface IndexOperation {
  readonly id: bigint;
  readonly remove: boolean;
  readonly words: IndexedWords;
}

/** What one transaction changes in the index, per plant. */
export class SearchIndexChanges {
  private readonly byId = new Map<bigint, WordsChange>();

  /** A plant created with these words. */
  added(id: bigint, words: IndexedWords): void {
    this.noteAfter(id, null, words);
  }

  /** A plant deleted; `words` are those its row held. */
  removed(id: bigint, words: IndexedWords): void {
    this.noteAfter(id, words, null);
  }

  /** A plant whose words changed from `from` (its row's) to `to`. */
  changed(id: bigint, from: IndexedWords, to: IndexedWords): void {
    this.noteAfter(id, from, to);
  }

  /** The net change in id order, a plant's removal before its addition. */
  net(): IndexOperation[] {
    const operations: IndexOperation[] = [];
    for (const [id, { before, after }] of this.byId) {
      if (before !== null && after !== null && sameWords(before, after)) continue;
      if (before !== null) operations.push({ id, remove: true, words: before });
      if (after !== null) operations.push({ id, remove: false, words: after });
    }
    // Stable: a plant's removal, noted first, stays before its addition.
    return operations.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The plant's words after this write; `before` counts only for its first write in the transaction. */
  private noteAfter(id: bigint, before: IndexedWords | null, after: IndexedWords | null): void {
    const change = this.byId.get(id);
    if (change === undefined) this.byId.set(id, { before, after });
    else change.after = after;
  }
}

/**
 * The words a plant's row keeps after a change from `before` to `after`: an unchanged field's stay the row's
 * (`row`), since the index holds those; a changed one's are `fresh`.
 */
export function keptWords(
  row: IndexedWords,
  before: PlantRecord,
  after: PlantRecord,
  fresh: IndexedWords,
): IndexedWords {
  const words: Partial<Record<WordsColumn, string>> = {};
  for (const { key, column } of SEARCHED_FIELDS)
    words[column] = after[key] === before[key] ? row[column] : fresh[column];
  return words as IndexedWords;
}

const sameWords = (a: IndexedWords, b: IndexedWords) => WORDS_COLUMNS.every((column) => a[column] === b[column]);

/**
 * The operations as one JSON array for json_each: ids written as digits, so an int64
 * keeps every one; the command column is 'delete' for a removal, null for an addition; the words follow in
 * WORDS_COLUMNS order.
 */
function operationsJson(operations: readonly IndexOperation[]): string {
  const rows = operations.map(({ id, remove, words }) => {
    let row = `[${remove ? '"delete"' : 'null'},${id}`;
    for (const column of WORDS_COLUMNS) row += `,${JSON.stringify(words[column])}`;
    return `${row}]`;
  });
  return `[${rows.join(',')}]`;
}

/** `value ->> 2, value ->> 3`: the words of an operationsJson row, from its third member on. */
const WORDS_MEMBERS = WORDS_COLUMNS.map((_, i) => `value ->> ${i + 2}`).join(', ');

export class SearchIndex {
  private readonly write: Database.Statement;

  constructor(db: Database.Database) {
    this.write = db.prepare(`INSERT INTO plants_search (plants_search, rowid, ${wordsColumnsSql()})
      SELECT value ->> 0, value ->> 1, ${WORDS_MEMBERS} FROM json_each(?) ORDER BY key`);
  }

  /** Writes a transaction's changes; call it inside that transaction, after its plant writes. */
  apply(changes: SearchIndexChanges): void {
    const operations = changes.net();
    if (operations.length > 0) this.write.run(operationsJson(operations));
  }
}
