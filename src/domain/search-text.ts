/**
 * How plants are found and ordered by name, for both stores. The service folds text itself and stores the
 * result (name_key, and a words column per field of SEARCHED_PLANT_KEYS: name_words, tag_words), since SQLite's
 * lower() folds only A-Z and PostgreSQL's folding depends on collation and unaccent: the stores then only compare
 * bytes, which both do alike. plant-find-sql.ts names these columns for every statement that writes or reads them.
 *
 * Folding: NFKD with combining marks dropped, then lower case ("Café" -> "cafe", "ﬁcus" -> "ficus").
 * Lower case comes second because some characters decompose to capitals (™ to "TM").
 * Words: runs of letters and digits (categories L and N); a term matches the start of a word of any searched field.
 */

import { SEARCHED_PLANT_KEYS } from './plant.js';

/** Longest word kept, in code points: a longer word is kept as its first 64 (PostgreSQL's lexemes are limited in size).
 * */
export const WORD_MAX_LENGTH = 64;
/** Longest name key, in code points: a longer one is cut (an index entry is limited in size); names that share it are
 * ordered by id. */
export const NAME_KEY_MAX_LENGTH = 256;

const COMBINING_MARKS = /\p{M}/gu;
const WORD_SEPARATORS = /[^\p{L}\p{N}]+/u;

function folded(text: string): string {
  return text.normalize('NFKD').replace(COMBINING_MARKS, '').toLowerCase();
}

/** The first `max` code points of `text`. */
function cut(text: string, max: number): string {
  // A string of at most `max` UTF-16 units has at most `max` code points.
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

/** The distinct words of `text`, folded and cut. */
function wordsOf(text: string): string[] {
  const words = new Set<string>();
  for (const word of folded(text).split(WORD_SEPARATORS)) {
    if (word !== '') words.add(cut(word, WORD_MAX_LENGTH));
  }
  return [...words];
}

/**
 * What a name sorts by: its folded text, compared by code point (bytewise in
 * UTF-8), then by id. "apple" < "Banana" < "cafe" = "Café" < "zinnia" < "Ærø".
 */
export function nameKey(name: string): string {
  return cut(folded(name), NAME_KEY_MAX_LENGTH);
}

/** A searched field's words as the stores keep them: separated by single spaces ('' for none, NULL too). */
export function searchWords(text: string | undefined | null): string {
  return text === undefined || text === null ? '' : wordsOf(text).join(' ');
}

/** A field whose words a search matches. */
export type SearchedPlantKey = (typeof SEARCHED_PLANT_KEYS)[number];

/** The column that keeps a searched field's words: `name_words`, `tag_words`. */
export type WordsColumn = `${SearchedPlantKey}_words`;

export function wordsColumnOf<K extends SearchedPlantKey>(key: K): `${K}_words` {
  return `${key}_words`;
}

/** Each searched field with its words column, in SEARCHED_PLANT_KEYS order (the order of every statement's columns). */
export const SEARCHED_FIELDS: readonly { readonly key: SearchedPlantKey; readonly column: WordsColumn }[] =
  SEARCHED_PLANT_KEYS.map((key) => ({ key, column: wordsColumnOf(key) }));

/** The words columns, in order. */
export const WORDS_COLUMNS: readonly WordsColumn[] = SEARCHED_FIELDS.map(({ column }) => column);

/** A plant's words as its row keeps them, by column. */
export type PlantWords = { readonly [C in WordsColumn]: string };

/** Every column the stores keep beside a plant's fields, by name: its name key and its words. */
export type FindRow = { readonly name_key: string } & PlantWords;

/** FindRow's columns, in the order statements write them. */
export const FIND_ROW_COLUMNS: readonly (keyof FindRow)[] = ['name_key', ...WORDS_COLUMNS];

/** The find columns of `plant`, as its row keeps them (an absent field has no words). */
export function findRow(
  plant: { readonly name: string } & { readonly [K in SearchedPlantKey]?: string | null },
): FindRow {
  // One object, built in place: this runs on every plant write.
  const row: { name_key: string } & Partial<Record<WordsColumn, string>> = { name_key: nameKey(plant.name) };
  for (const { key, column } of SEARCHED_FIELDS) row[column] = searchWords(plant[key]);
  return row as FindRow;
}

/**
 * The find columns of migrations 0007 and 0013, as those knew them (the fields there were then): their data
 * steps write exactly these, whatever fields later migrations search.
 */
export interface FindColumns {
  readonly nameKey: string;
  readonly nameWords: string;
  readonly tagWords: string;
}

export function findColumns(name: string, tag: string | undefined | null): FindColumns {
  return { nameKey: nameKey(name), nameWords: searchWords(name), tagWords: searchWords(tag ?? undefined) };
}

/** The terms of a search query `q`: its folded words, each to match the start of a word. Empty when it has none. */
export function searchTerms(q: string): string[] {
  return wordsOf(q);
}
