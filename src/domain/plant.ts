/** A plant as the service holds it: its int64 id as a bigint, never a JS number. */
export interface PlantRecord {
  readonly id: bigint;
  readonly name: string;
  /** Absent (undefined) when the plant has no tag; never null. */
  readonly tag?: string;
}

/**
 * A stored plant with its version: a number from one counter for the whole store,
 * new on every change (a create, an update that changes something), never reused,
 * so it tells apart any two states a plant id has had. Its ETag is `"<version>"`.
 */
export interface VersionedPlant extends PlantRecord {
  readonly version: bigint;
}

/**
 * A change to a plant, as a JSON Merge Patch (RFC 7396) reads: a name or tag left
 * out is kept; a tag of null removes it.
 */
export interface PlantChange {
  readonly id: bigint;
  readonly name?: string;
  readonly tag?: string | null;
}

/** The plant a change makes of `plant`. */
export function changed(plant: PlantRecord, change: PlantChange): PlantRecord {
  const name = change.name ?? plant.name;
  const tag = change.tag === undefined ? plant.tag : (change.tag ?? undefined);
  return tag === undefined ? { id: plant.id, name } : { id: plant.id, name, tag };
}

/** The versions an If-Match accepts: any existing plant, or one of these. */
export type ExpectedVersion = 'any' | readonly bigint[];

export function versionMatches(expected: ExpectedVersion | undefined, version: bigint): boolean {
  return expected === undefined || expected === 'any' || expected.includes(version);
}
