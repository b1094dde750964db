/** What the orders of PlantOrder (types.ts) have in common on every store. */
import type { PlantOrder } from './types.js';

/** Name orders: a place in them is a name key and an id, so their cursors carry both. */
export function isNameOrder(order: PlantOrder): boolean {
  return order === 'name' || order === '-name';
}
