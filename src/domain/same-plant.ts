import type { PlantRecord } from './plant.js';

/** Whether a create of `incoming` is a safe retry of the stored `existing` plant. */
export function samePlant(existing: PlantRecord, incoming: PlantRecord): boolean {
  return existing.name === incoming.name && existing.tag === incoming.tag;
}
