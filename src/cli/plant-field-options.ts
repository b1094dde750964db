/**
 * The plant's optional fields as `plants add` and `plants update` flags, and its fields as
 * output columns, all from the plant's definition: `--tag <tag>` to set one, `--no-tag` to remove it.
 * A field's key is its flag's name, so a field named in one word is what this expects.
 */
import type { Command } from 'commander';
import type { Plant } from '../../packages/client/src/index.js';
import { ConfigError } from '../config/index.js';
import {
  OPTIONAL_CONTENT_KEYS,
  PLANT_KEYS,
  PLANT_TEXT_RULES,
  type OptionalPlantKey,
  type PlantContentKey,
} from '../domain/plant.js';

const OPTIONAL_KEYS = OPTIONAL_CONTENT_KEYS;

/** What Commander parses the field flags into: a value, or false for `--no-<field>`. */
export type FieldOptions = { readonly [K in OptionalPlantKey]?: string | false };

/** A field's lengths, for help: `1 to 100 characters`. */
export const lengthsOf = (key: PlantContentKey): string =>
  `${PLANT_TEXT_RULES[key].minLength} to ${PLANT_TEXT_RULES[key].maxLength} characters`;

/** `--tag <tag>` for each optional field, for `plants add`. */
export function withCreateFieldOptions(command: Command): Command {
  for (const key of OPTIONAL_KEYS) command.option(`--${key} <${key}>`, `a ${key}, ${lengthsOf(key)}`);
  return command;
}

/** The optional fields given to `plants add`. */
export function createdFields(options: FieldOptions): { [K in OptionalPlantKey]?: string } {
  const fields: { [K in OptionalPlantKey]?: string } = {};
  for (const key of OPTIONAL_KEYS) {
    const value = options[key];
    if (typeof value === 'string') fields[key] = value;
  }
  return fields;
}

/**
 * `--tag <tag>` and `--no-tag` for each optional field, for `plants update`. Commander keeps one value for
 * both forms, the last given: each is noted as it is parsed, so that `refuseBothForms` refuses both rather
 * than let the order decide.
 */
export function withChangeFieldOptions(command: Command): { command: Command; refuseBothForms: () => void } {
  const given = new Map<OptionalPlantKey, Set<string>>();
  for (const key of OPTIONAL_KEYS) {
    const forms = new Set<string>();
    given.set(key, forms);
    command.option(`--${key} <${key}>`, `a new ${key}, ${lengthsOf(key)}`).option(`--no-${key}`, `remove the ${key}`);
    command.on(`option:${key}`, () => forms.add(`--${key}`));
    command.on(`option:no-${key}`, () => forms.add(`--no-${key}`));
  }
  const refuseBothForms = (): void => {
    for (const [key, forms] of given) {
      if (forms.size > 1) throw new ConfigError(`give --${key} or --no-${key}, not both`);
    }
  };
  return { command, refuseBothForms };
}

/** Every flag that changes a field, for a message: `--name, --tag or --no-tag`. */
export function changeFlags(): string {
  const flags = ['--name', ...OPTIONAL_KEYS.flatMap((key) => [`--${key}`, `--no-${key}`])];
  return `${flags.slice(0, -1).join(', ')} or ${flags.at(-1) ?? ''}`;
}

/** The optional fields `plants update` changes: a value sets one, `--no-<field>` (false) removes it. */
export function changedFields(options: FieldOptions): { [K in OptionalPlantKey]?: string | null } {
  const fields: { [K in OptionalPlantKey]?: string | null } = {};
  for (const key of OPTIONAL_KEYS) {
    const value = options[key];
    if (value !== undefined) fields[key] = value === false ? null : value;
  }
  return fields;
}

/** The output's column headers: ID, NAME, TAG. */
export const PLANT_COLUMN_HEADERS = PLANT_KEYS.map((key) => key.toUpperCase());

/** A plant's output cells, in the headers' order; an absent field is empty. */
export function plantCells(plant: Plant): string[] {
  return PLANT_KEYS.map((key) => String(plant[key] ?? ''));
}
