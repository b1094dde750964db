/**
 * The schema of an If-Match or If-None-Match request header: its pattern is RFC 9110's grammar, so the document
 * states it and validation refuses anything else with 400 INVALID_PARAMETER naming the header, rather than taking a
 * malformed value for a list that names no version (a 412 that would send a client re-reading for nothing).
 */
import { ENTITY_TAG_LIST } from '../domain/text-rules.js';

const GRAMMAR =
  ' The value is `*` or a comma-separated list of entity-tags, `"..."` or weak `W/"..."` (RFC 9110); anything else, an ' +
  'empty value included, is a 400 INVALID_PARAMETER.';

export function entityTagListHeader<const D extends string>(description: D) {
  return { type: 'string', pattern: ENTITY_TAG_LIST, description: `${description}${GRAMMAR}` } as const;
}
