/**
 * The parameters that choose plants, shared by the list (GET /plants) and the
 * export (GET /plants/export): search words and tags.
 */
import { SEARCHED_FIELDS_OR } from '../domain/plant-words.js';
import { searchTerms } from '../domain/search-text.js';
import { PRINTABLE_TEXT } from '../domain/text-rules.js';
import { failure } from '../http/errors.js';
import { PlantTag } from './schemas.js';

export const MAX_TAGS = 10;
export const Q_MAX_LENGTH = 200;
export const MAX_TERMS = 8;

export const FindQueryProperties = {
  q: {
    type: 'string',
    minLength: 1,
    maxLength: Q_MAX_LENGTH,
    pattern: PRINTABLE_TEXT,
    description:
      `Search words (at most ${MAX_TERMS}, ${Q_MAX_LENGTH} characters in all): plants whose ${SEARCHED_FIELDS_OR} has, for every ` +
      'word, a word that starts ' +
      'with it (`mon` and `delic` both find "Monstera deliciosa"). Case, accents and other marks are ignored (`cafe` finds "Café"); ' +
      'words are runs of letters and digits, everything else separates them; no stemming. No control characters. ' +
      `It must contain at least one letter or digit and at most ${MAX_TERMS} words, else 400 INVALID_PARAMETER ` +
      '(`q=-` or `q=😍` has no word to search for).',
  },
  tag: {
    type: 'array',
    items: PlantTag,
    minItems: 1,
    maxItems: MAX_TAGS,
    description: `Only plants with exactly this tag; repeat it (up to ${MAX_TAGS} times) for plants with any of the tags.`,
  },
} as const;

/** The search terms of `q`, refused when it has none or too many. */
export function termsOf(q: string | undefined): string[] | undefined {
  if (q === undefined) return undefined;
  const terms = searchTerms(q);
  if (terms.length === 0) throw failure('INVALID_PARAMETER', ['q must contain at least one letter or digit']);
  if (terms.length > MAX_TERMS)
    throw failure('INVALID_PARAMETER', [`q must have at most ${MAX_TERMS} words (it has ${terms.length})`]);
  return terms;
}
