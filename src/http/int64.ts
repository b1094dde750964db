/**
 * int64 ids, exact end to end. Inside the service an id is a `bigint`; on the wire
 * it is a JSON number (bodies) or a decimal string (paths, query strings).
 */
import { isInt64 } from '../domain/int64.js';

export { INT64_MAX, INT64_MIN, isInt64 } from '../domain/int64.js';

// A plain decimal integer: no sign but '-', no leading zeros, no spaces, no exponent.
const DECIMAL_INTEGER = /^-?(?:0|[1-9][0-9]{0,18})$/;

/** Parses a path or query parameter; undefined when it is not an int64 written plainly. */
export function parseInt64Text(text: string): bigint | undefined {
  if (!DECIMAL_INTEGER.test(text) || text === '-0') return undefined;
  const value = BigInt(text);
  return isInt64(value) ? value : undefined;
}

/**
 * The exact value of a JSON number literal, as the JSON body parser hands it on:
 * - an integer that a double holds exactly (|n| <= 2^53 - 1) becomes a `number`;
 * - any other integer becomes a `bigint` (of any size: the range check comes later,
 *   so the client is told "out of range" rather than "not an integer");
 * - a value that is not an integer becomes NaN, so no rounding can ever turn a
 *   fraction such as 1e-400 or 9007199254740993.5 into an acceptable integer.
 * Exponents are honoured exactly (1e3 is the integer 1000, as JSON Schema counts it).
 */
export function exactJsonNumber(literal: string): number | bigint {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(literal);
  if (match === null) return Number.NaN;
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  let digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') return 0;
  // Work in units of the last digit; cap the exponent so "1e999999999" costs nothing.
  let exponent = Math.max(-1e6, Math.min(1e6, Number(exponentText))) - fraction.length;
  const trailingZeros = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailingZeros);
  exponent += trailingZeros;
  if (exponent < 0) return Number.NaN;
  // 10^20 already exceeds int64; anything longer is out of range, whatever it is.
  if (digits.length + exponent > 20) return sign === '-' ? -Infinity : Infinity;
  const value = BigInt(sign + digits) * 10n ** BigInt(exponent);
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** True for a value the body parser produced that is an int64 integer. */
export function isInt64Value(value: unknown): value is number | bigint {
  if (typeof value === 'number') return Number.isSafeInteger(value);
  if (typeof value === 'bigint') return isInt64(value);
  return false;
}

/** True for a value that is an integer, however large (to tell "out of range" from "not an integer"). */
export function isIntegerValue(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  return typeof value === 'number' && (Number.isInteger(value) || value === Infinity || value === -Infinity);
}
