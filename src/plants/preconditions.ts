/**
 * Conditional requests (RFC 9110, section 13). A plant's ETag is its version in quotes: strong,
 * and the same from every instance and both stores. If-Match compares strongly (a weak tag
 * never matches); If-None-Match on a read compares weakly.
 */
import type { ExpectedVersion } from '../domain/plant.js';

export function etagOf(version: bigint): string {
  return `"${version}"`;
}

const ENTITY_TAG = /(W\/)?"([^"]*)"/g;
const VERSION = /^[0-9]{1,19}$/;

/** The entity-tags of a list header, each with whether it is weak, or 'any' for `*`. */
function entityTags(header: string): 'any' | { weak: boolean; opaque: string }[] {
  if (header.trim() === '*') return 'any';
  return [...header.matchAll(ENTITY_TAG)].map((match) => ({ weak: match[1] !== undefined, opaque: match[2] ?? '' }));
}

function versionOf(opaque: string): bigint | undefined {
  return VERSION.test(opaque) ? BigInt(opaque) : undefined;
}

/** What an If-Match header accepts: undefined when absent, 'any' for `*`, else the versions its strong tags name
 * (possibly none). */
export function expectedByIfMatch(header: string | undefined): ExpectedVersion | undefined {
  if (header === undefined) return undefined;
  const tags = entityTags(header);
  if (tags === 'any') return 'any';
  return tags.flatMap(({ weak, opaque }) => {
    const version = weak ? undefined : versionOf(opaque);
    return version === undefined ? [] : [version];
  });
}

/** Whether If-None-Match matches the plant's current version (weak comparison), so a read answers 304. */
export function noneMatchHits(header: string | undefined, version: bigint): boolean {
  if (header === undefined) return false;
  const tags = entityTags(header);
  return tags === 'any' || tags.some(({ opaque }) => versionOf(opaque) === version);
}

/** Whether If-None-Match is `*`: on a create, "only if no plant has this id". */
export function noneMatchAny(header: string | undefined): boolean {
  return header !== undefined && entityTags(header) === 'any';
}

/**
 * Whether If-None-Match forbids a change of a plant at `version` (RFC 9110 13.1.2): `*` forbids any change of an
 * existing plant, a list forbids it while the plant is at a version the list names (weak comparison).
 */
export function noneMatchForbids(header: string | undefined, version: bigint): boolean {
  return noneMatchHits(header, version);
}
