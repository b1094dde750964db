/** Kept for the modules that import it from here; the definition is plant.ts's. */
export { samePlant } from './plant.js';
