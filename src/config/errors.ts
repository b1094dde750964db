/**
 * The start-up error and the parsers every setting uses: each failure names the
 * variable, what it must be and what it got, in one line.
 */
export class ConfigError extends Error {}

export type Source = Readonly<Record<string, string | undefined>>;

export function integer(source: Source, name: string, fallback: number, min: number, max: number): number {
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got '${raw}')`);
  }
  return value;
}

export function oneOf<T extends string>(source: Source, name: string, allowed: readonly T[], fallback: T): T {
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  const found = allowed.find((value) => value === raw);
  if (found === undefined) throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got '${raw}')`);
  return found;
}

export function boolean(source: Source, name: string, fallback: boolean): boolean {
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new ConfigError(`${name} must be true or false (got '${raw}')`);
}
