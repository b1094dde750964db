/**
 * JSON for the client, exact for int64 ids: JSON.parse rounds any number above 2^53, so ids
 * are read with lossless-json as bigint. A body without a long run of digits cannot hold
 * such a number, so it takes the fast path.
 */
import { isLosslessNumber, parse, stringify, type LosslessNumber } from 'lossless-json';

/** Fields that carry an int64: a plant's id, and a webhook delivery's plantId. */
const INT64_FIELDS: ReadonlySet<string> = new Set(['id', 'plantId']);

const MAY_NEED_LOSSLESS = /[0-9]{16}|[0-9][eE]/;

function reviveFast(key: string, value: unknown): unknown {
  return INT64_FIELDS.has(key) && typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value;
}

function reviveLossless(key: string, value: unknown): unknown {
  if (!isLosslessNumber(value)) return value;
  const number = value as LosslessNumber;
  if (INT64_FIELDS.has(key) && /^-?[0-9]+$/.test(number.value)) return BigInt(number.value);
  // Anything else must fit a double exactly; valueOf() throws rather than round.
  return number.valueOf();
}

export function parseJson(text: string): unknown {
  if (!MAY_NEED_LOSSLESS.test(text)) return JSON.parse(text, reviveFast);
  return parse(text, reviveLossless);
}

export function stringifyJson(value: unknown, indent?: number): string {
  const text = stringify(value, undefined, indent);
  if (text === undefined) throw new TypeError('cannot serialise this value as JSON');
  return text;
}
