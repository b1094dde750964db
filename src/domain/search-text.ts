/**
 * How plants are found and ordered by name, defined once, here, for both stores.
 *
 * Neither database is asked to fold text: SQLite's lower() folds only A-Z and it has
 * no diacritic folding outside FTS5's tokenizer; PostgreSQL's depends on the
 * collation and on the unaccent extension's rules file. Each would find and order
 * some names differently. So the service folds, with this code, and stores what it
 * computed beside the plant (name_key, name_words, tag_words): the stores only
 * compare the stored text bytewise, which both do the same way.
 *
 * Folding: compatibility decomposition (NFKD) with every combining mark dropped,
 * then lower case (Unicode's default mapping): "Café" and "CAFE" both become "cafe",
 * "ﬁcus" becomes "ficus", "Zen™" "zentm", "ℌ" and "𝐁" "h" and "b". Lower case comes
 * second because some characters decompose to capitals (™ to "TM"): folded first,
 * they kept them, and each store's search then treated the capitals its own way.
 * Letters that do not decompose stay as they are ("ß", "æ").
 *
 * Words: runs of letters and digits (Unicode categories L and N) of the folded text;
 * everything else separates them. A search term matches a plant when it is the start
 * of one of the words of its name or tag.
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
