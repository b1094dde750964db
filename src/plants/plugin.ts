/** The plant feature: its shared schemas (components of the OpenAPI document), its routes and those that change plants. */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { plantChangeRoutes } from './change-routes.js';
import { plantListRoutes } from './list-route.js';
import { plantRoutes } from './routes.js';
import { NewPlant, Plant, PlantPatch, PlantReplacement, StoredPlant } from './schemas.js';

export const plantsPlugin = fp(async (app: FastifyInstance) => {
  for (const schema of [NewPlant, Plant, StoredPlant, PlantPatch, PlantReplacement]) app.addSchema(schema);
  await app.register(plantRoutes);
  await app.register(plantListRoutes);
  await app.register(plantChangeRoutes);
}, { name: 'plants', dependencies: ['store', 'auth'] });
