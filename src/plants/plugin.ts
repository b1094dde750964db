/** The plant feature: its shared schemas (components of the OpenAPI document), its routes, those that change plants,
 * and bulk import and export. */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { plantExportRoutes } from './bulk/export-route.js';
import { plantImportRoutes } from './bulk/import-route.js';
import { plantChangeRoutes } from './change-routes.js';
import { plantListRoutes } from './list-route.js';
import { plantRoutes } from './routes.js';
import { NewPlant, Plant, PlantPatch, PlantReplacement, StoredPlant } from './schemas.js';
import { PerTokenPlaces } from '../tokens/per-token-places.js';

export const plantsPlugin = fp(
  async (app: FastifyInstance) => {
    for (const schema of [NewPlant, Plant, StoredPlant, PlantPatch, PlantReplacement]) app.addSchema(schema);
    await app.register(plantRoutes);
    await app.register(plantListRoutes);
    await app.register(plantChangeRoutes);
    // Imports and exports share one count per token, BULK_MAX_PER_TOKEN. The store runs only a few at once
    // (store/core/bulk-slots.ts: 503 beyond) and an export runs at its reader's pace for up to EXPORT_TIMEOUT_MS:
    // without the count, one token could hold every slot and keep every other token's at 503.
    const bulk = new PerTokenPlaces(app.config.bulkMaxPerToken);
    await app.register(plantImportRoutes(bulk));
    await app.register(plantExportRoutes(bulk));
    // The dispatcher's onResponse hook (it nudges after each plant write) reaches these routes only
    // because it was added before them: hence the dependency.
  },
  {
    name: 'plants',
    dependencies: ['store', 'auth', 'query-string-rules', 'collect-routes', 'webhook-dispatcher'],
    decorators: { fastify: ['config'] },
  },
);
