/** The plant feature: its shared schemas (components of the OpenAPI document), its routes, those that change plants, and bulk import and export. */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BulkPerToken } from './bulk/bulk-per-token.js';
import { plantExportRoutes } from './bulk/export-route.js';
import { plantImportRoutes } from './bulk/import-route.js';
import { plantChangeRoutes } from './change-routes.js';
import { plantListRoutes } from './list-route.js';
import { plantRoutes } from './routes.js';
import { NewPlant, Plant, PlantPatch, PlantReplacement, StoredPlant } from './schemas.js';

export const plantsPlugin = fp(async (app: FastifyInstance) => {
  for (const schema of [NewPlant, Plant, StoredPlant, PlantPatch, PlantReplacement]) app.addSchema(schema);
  await app.register(plantRoutes);
  await app.register(plantListRoutes);
  await app.register(plantChangeRoutes);
  // Imports and exports share one count per token.
  const bulk = new BulkPerToken(app.config.bulkMaxPerToken);
  await app.register(plantImportRoutes(bulk));
  await app.register(plantExportRoutes(bulk));
}, { name: 'plants', dependencies: ['store', 'auth'] });
