/** Which plants a list, a count or an export covers: a module of its own, as both index.ts and bulk.ts use it. */
export interface PlantFilter {
  /** Search words: each must start a word of the plant's name or tag (case and accents ignored). */
  readonly q?: string;
  /** A tag, or several: plants with any of them. */
  readonly tag?: string | readonly string[];
}
