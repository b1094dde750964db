/**
 * `Prefer: count=exact` and `Prefer: count=estimated` (RFC 7240) on GET and HEAD
 * /plants: counting is opt-in, because it costs a pass over every matching plant.
 * A preference the service does not know is ignored, as RFC 7240 asks.
 */

export type CountPreference = 'exact' | 'estimated';

const COUNT = /^count\s*=\s*"?(exact|estimated)"?$/i;

/** The count a request prefers, if any: the first `count=` preference of its Prefer headers. */
export function countPreference(header: string | string[] | undefined): CountPreference | undefined {
  if (header === undefined) return undefined;
  for (const preference of [header].flat().join(',').split(',')) {
    const match = COUNT.exec(preference.split(';')[0]?.trim() ?? '');
    if (match !== null) return (match[1] ?? '').toLowerCase() as CountPreference;
  }
  return undefined;
}
