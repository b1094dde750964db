/**
 * The rules for text that clients send, as JSON Schema patterns and as what a validation
 * error says. Names, tags and descriptions are single-line; PostgreSQL cannot store NUL, and
 * unpaired surrogates cannot be encoded as UTF-8, so neither would round-trip through a store.
 */

/** Unicode's control characters (C0, DEL, C1), as a character-class range in pattern text. */
const CONTROL_RANGES = '\\u0000-\\u001F\\u007F-\\u009F';

/** Single-line text: no control characters, no unpaired surrogates. */
export const PRINTABLE_TEXT = `^[^${CONTROL_RANGES}\\uD800-\\uDFFF]*$`;

/** An opaque id the service generated (whk_..., dlv_...): letters, digits and underscores. */
export const OPAQUE_ID = '^[A-Za-z0-9_]+$';

/** The control characters PRINTABLE_TEXT refuses, for callers without a schema (the CLI). */
export const CONTROL_CHARACTER = new RegExp(`[${CONTROL_RANGES}]`);

/** What a webhook URL must not contain: a URL parser would drop or re-encode it silently, and the raw text is stored.
 * */
export const URL_FORBIDDEN_CHARACTER = new RegExp(`[ ${CONTROL_RANGES}]`);

const PATTERN_PHRASES: Readonly<Record<string, string>> = {
  [PRINTABLE_TEXT]: 'must not contain control characters or unpaired surrogates',
  [OPAQUE_ID]: 'must contain only letters, digits and underscores',
};

/** What a validation error says when a value does not match `pattern`. */
export function describePattern(pattern: string | undefined): string {
  return (pattern !== undefined && PATTERN_PHRASES[pattern]) || `must match the pattern ${pattern ?? ''}`.trimEnd();
}
