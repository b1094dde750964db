/**
 * The opaque cursor of GET /plants' next-page links: where the page ended, signed with the
 * store's secret together with its query. An altered cursor, another store's, or one sent
 * with another sort or filter is refused (400): read anyway, it would skip or repeat plants.
 *
 * Form: base64url(JSON [id as decimal text, name key?]) "." base64url(HMAC-SHA256, first 16 bytes).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { failure } from '../http/errors.js';
import { isNameOrder } from '../store/plant-order.js';
import type { PlantFilter, PlantOrder } from '../store/types.js';

/** Where the next page starts: after this plant in the order. */
export interface PagePosition {
  readonly id: bigint;
  /** In name orders, the plant's name key. */
  readonly key?: string;
}

/** What a cursor is valid for: its page's order and filter (the limit may change between pages). */
export interface CursorScope extends PlantFilter {
  readonly order: PlantOrder;
}

const MAC_BYTES = 16;
/** A cursor's name key is at most NAME_KEY_MAX_LENGTH code points; this bounds its text with room to spare. */
export const CURSOR_MAX_LENGTH = 2048;

function refused(): Error {
  return failure('INVALID_PARAMETER', [
    'cursor is not one this service made for this query: follow the Link header of the previous page, with the same sort, q and tag',
  ]);
}

/** The scope as one text: the same query gives the same text, whatever the order of its tags and terms. */
function scopeText({ order, tags = [], terms = [] }: CursorScope): string {
  return JSON.stringify([order, [...new Set(tags)].sort(), [...new Set(terms)].sort()]);
}

export class PageCursors {
  constructor(private readonly secret: string) {}

  encode(position: PagePosition, scope: CursorScope): string {
    const payload = Buffer.from(
      JSON.stringify(position.key === undefined ? [position.id.toString()] : [position.id.toString(), position.key]),
    ).toString('base64url');
    return `${payload}.${this.mac(payload, scope).toString('base64url')}`;
  }

  /** The position a cursor names; a 400 INVALID_PARAMETER naming `cursor` when it is not one of ours for this scope. */
  decode(cursor: string, scope: CursorScope): PagePosition {
    const [payload = '', mac = '', ...rest] = cursor.split('.');
    const given = Buffer.from(mac, 'base64url');
    if (rest.length > 0 || given.length !== MAC_BYTES || !timingSafeEqual(given, this.mac(payload, scope)))
      throw refused();
    // Signed by us, so well formed; checked all the same, as a secret can leak.
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw refused();
    }
    if (!Array.isArray(parsed) || typeof parsed[0] !== 'string' || !/^-?\d{1,19}$/.test(parsed[0])) throw refused();
    const id = BigInt(parsed[0]);
    const nameOrder = isNameOrder(scope.order);
    if (nameOrder !== (typeof parsed[1] === 'string')) throw refused();
    return nameOrder ? { id, key: parsed[1] as string } : { id };
  }

  private mac(payload: string, scope: CursorScope): Buffer {
    return createHmac('sha256', this.secret)
      .update(`${payload}\n${scopeText(scope)}`)
      .digest()
      .subarray(0, MAC_BYTES);
  }
}
