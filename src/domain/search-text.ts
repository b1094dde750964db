/**
 * How plants are found and ordered by name, for both stores. The service folds text itself and stores the
 * result (name_key, name_words, tag_words), since SQLite's lower() folds only A-Z and PostgreSQL's folding
 * depends on collation and unaccent: the stores then only compare bytes, which both do alike.
 *
 * Folding: NFKD with combining marks dropped, then lower case ("Café" -> "cafe", "ﬁcus" -> "ficus").
 * Lower case comes second because some characters decompose to capitals (™ to "TM").
 * Words: runs of letters and digits (categories L and N); a term matches the start of a word of the name or tag.
 */

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

/** A name's or tag's words as the stores keep them: separated by single spaces ('' for none). */
export function searchWords(text: string | undefined): string {
  return text === undefined ? '' : wordsOf(text).join(' ');
}

/** The columns the stores keep beside a plant's name and tag, for finding and ordering it. */
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
