/**
 * The int64 range of plant ids, a domain rule: HTTP refuses ids outside it, and the stores never send one
 * to the database, where it would fail a whole batch.
 */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export function isInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}
