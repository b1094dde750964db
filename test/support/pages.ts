/** Reading a store's pages (listPlantsPage answers JSON text) back as plant records, ids exact. */
import { parse } from 'lossless-json';
import type { ListPlantsQuery, PlantRecord, Store } from '../../src/store/types.js';

/** Parses a page exactly: ids as bigint, through lossless-json. */
export function pageRecords(json: string): PlantRecord[] {
  const parsed = parse(json, undefined, (value) => BigInt(value)) as { id: bigint; name: string; tag?: string }[];
  return parsed.map((p) => (p.tag === undefined ? { id: p.id, name: p.name } : { id: p.id, name: p.name, tag: p.tag }));
}

/** The plants of one page of `query`. */
export async function listed(store: Store, query: ListPlantsQuery): Promise<PlantRecord[]> {
  return pageRecords((await store.plants.listPlantsPage(query)).json);
}
