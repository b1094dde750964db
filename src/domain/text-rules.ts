/**
 * The rules for text that clients send, as JSON Schema patterns and as what a validation
 * error says. Names, tags and descriptions are single-line; PostgreSQL cannot store NUL, and
 * unpaired surrogates cannot be encoded as UTF-8, so neither would round-trip through a store.
 */
import { LIFETIME, LIFETIME_RULE } from './lifetime.js';

/** Unicode's control characters (C0, DEL, C1), as a character-class range in pattern text. */
const CONTROL_RANGES = '\\u0000-\\u001F\\u007F-\\u009F';

/**
 * Single-line text: no control characters. It names no surrogate, so every regular-expression engine reads it
 * alike: with or without ECMAScript's `u` flag an emoji passes, and none has a surrogate range to refuse. Unpaired
 * surrogates (only a JSON escape such as `\ud800` can carry one) are refused by WELL_FORMED, beside it.
 */
export const PRINTABLE_TEXT = `^[^${CONTROL_RANGES}]*$`;

/**
 * The validator keyword that refuses text with an unpaired surrogate; every string of a request gets it, and the
 * OpenAPI document says the rule in words (a pattern for it could not be read alike by every engine).
 */
export const WELL_FORMED = 'wellFormed';

/** An unpaired surrogate: with the `u` flag a proper pair is one code point, so only a lone half is in Cs. */
export const UNPAIRED_SURROGATE = /\p{Cs}/u;

export const WELL_FORMED_PROBLEM = 'must not contain unpaired surrogates (such as the JSON escape \\ud800 alone)';

/** An opaque id the service generated (whk_..., dlv_...): letters, digits and underscores. */
export const OPAQUE_ID = '^[A-Za-z0-9_]+$';

/** The control characters PRINTABLE_TEXT refuses, for callers without a schema (the CLI). */
export const CONTROL_CHARACTER = new RegExp(`[${CONTROL_RANGES}]`);

/** What a webhook URL must not contain: a URL parser would drop or re-encode it silently, and the raw text is stored.
 * */
export const URL_FORBIDDEN_CHARACTER = new RegExp(`[ ${CONTROL_RANGES}]`);

/** A change-stream event id as the stream sends it, `<history>-<position>`; a bare position is what earlier releases'
 * clients kept. */
export const EVENT_ID = '^([0-9a-f]{16}-)?(0|[1-9][0-9]{0,18})$';

/** One entity-tag (RFC 9110 8.8.3): `"..."` or weak `W/"..."`, the opaque part printable ASCII but `"`, or obs-text. */
const ENTITY_TAG = '(W/)?"[!#-~\\u0080-\\u00FF]*"';

/**
 * An If-Match or If-None-Match value (RFC 9110 13.1.1, 13.1.2): `*`, or a comma-separated list of entity-tags (empty
 * elements between commas ignored, as the list rule asks of a recipient); at least one tag, so an empty value is
 * malformed.
 */
export const ENTITY_TAG_LIST = `^(\\*|[ \\t]*(,[ \\t]*)*${ENTITY_TAG}[ \\t]*(,([ \\t]*${ENTITY_TAG}[ \\t]*)?)*)$`;

/**
 * A token name: ASCII letters, digits, '.', '_' and '-', starting with a letter or digit, and not with 'tok_' (token
 * ids start so, and a name must never be read as another token's id). Spelled without a lookahead, which not every
 * engine reads; its length is the schema's minLength and maxLength.
 */
export const TOKEN_NAME =
  '^(?:[A-Za-su-z0-9]|t(?:$|[A-Za-np-z0-9._-]|o(?:$|[A-Za-jl-z0-9._-]|k(?:$|[A-Za-z0-9.-]))))[A-Za-z0-9._-]*$';

export const TOKEN_NAME_RULE =
  "letters (A-Z, a-z), digits, '.', '_' or '-', starting with a letter or digit, and not starting with 'tok_'";

const PATTERN_PHRASES: Readonly<Record<string, string>> = {
  [PRINTABLE_TEXT]: 'must not contain control characters',
  [TOKEN_NAME]: `must contain only ${TOKEN_NAME_RULE}`,
  [LIFETIME]: `must be ${LIFETIME_RULE}`,
  [OPAQUE_ID]: 'must contain only letters, digits and underscores',
  [EVENT_ID]: 'must be an event id as the stream sent it (<history>-<position>)',
  [ENTITY_TAG_LIST]: 'must be * or a comma-separated list of entity-tags ("..." or W/"...")',
};

/** What a validation error says when a value does not match `pattern`. */
export function describePattern(pattern: string | undefined): string {
  return (pattern !== undefined && PATTERN_PHRASES[pattern]) || `must match the pattern ${pattern ?? ''}`.trimEnd();
}
