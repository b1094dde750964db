/**
 * A token's lifetime as a client writes it (`expiresIn`, `--expires-in`): a count and a unit, at most
 * MAX_LIFETIME_DAYS. The pattern states the bound exactly, so the OpenAPI document, the validator, the service and
 * the CLI agree on every value; without a bound, 100000000d made a Date that is no date at all.
 */
export const LIFETIME_UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

type LifetimeUnit = keyof typeof LIFETIME_UNIT_MS;

/** About ten years: a token meant to last longer should not expire at all. */
export const MAX_LIFETIME_DAYS = 3650;
export const MAX_LIFETIME_MS = MAX_LIFETIME_DAYS * LIFETIME_UNIT_MS.d;

const UNITS = Object.keys(LIFETIME_UNIT_MS) as LifetimeUnit[];

/** Each unit's largest whole count within the bound: 315360000s, 5256000m, 87600h, 3650d, 521w. */
const LONGEST = UNITS.map((unit) => `${Math.floor(MAX_LIFETIME_MS / LIFETIME_UNIT_MS[unit])}${unit}`);

/** The integers 1 to `max`, written without leading zeros, as alternatives of a pattern (no engine-specific syntax). */
function oneTo(max: number): string {
  const digits = String(max);
  // Shorter than max: a digit 1-9, then any digits.
  const alternatives = digits.length > 1 ? [`[1-9][0-9]{0,${digits.length - 2}}`] : [];
  // As long as max: its first i digits, then a smaller digit, then any digits.
  for (let i = 0; i < digits.length; i++) {
    const low = i === 0 ? 1 : 0;
    const high = Number(digits[i]) - 1;
    if (high < low) continue;
    const rest = digits.length - i - 1;
    alternatives.push(
      `${digits.slice(0, i)}${high === low ? low : `[${low}-${high}]`}${rest > 0 ? `[0-9]{${rest}}` : ''}`,
    );
  }
  return [...alternatives, digits].join('|');
}

/** A lifetime within the bound: leading zeros allowed, spaces between the count and the unit. */
export const LIFETIME = `^0*(?:${UNITS.map(
  (unit) => `(?:${oneTo(Math.floor(MAX_LIFETIME_MS / LIFETIME_UNIT_MS[unit]))}) *${unit}`,
).join('|')})$`;

/** The rule in words, for the schema's description and every message that refuses a lifetime. */
export const LIFETIME_RULE =
  `a count and a unit (s, m, h, d or w), e.g. 12h, 30d, 2w: at least 1s and at most ${MAX_LIFETIME_DAYS}d ` +
  `(about 10 years; ${LONGEST.join(', ')})`;

const LIFETIME_PATTERN = new RegExp(LIFETIME);

/** The lifetime in milliseconds, or undefined when `text` is not one within the bound. */
export function lifetimeMs(text: string): number | undefined {
  if (!LIFETIME_PATTERN.test(text)) return undefined;
  const count = Number(text.slice(0, -1).trim());
  return count * LIFETIME_UNIT_MS[text.slice(-1) as LifetimeUnit];
}
