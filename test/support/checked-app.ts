/**
 * buildApp for tests that build the app themselves instead of through the harness: the same app, with every
 * response checked against its OpenAPI document (contract-check.ts). An injected response is checked when it
 * arrives; a socket's when the app closes, whose close() then fails with what did not match.
 */
import { AssertionError } from 'node:assert';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppDependencies } from '../../src/app.js';
import type { Config } from '../../src/config/index.js';
import { checkServerResponses, ContractCheck, decoded, encodingOf } from './contract-check.js';

export function contractMismatch(problems: readonly string[]): AssertionError {
  return new AssertionError({ message: `responses do not match the OpenAPI document:\n${problems.join('\n')}` });
}

/** Checks the responses `app` sends from now on, by inject() or over its server. */
export function checkResponses(app: FastifyInstance): FastifyInstance {
  const check = ContractCheck.of(app);
  const socketProblems: string[] = [];
  checkServerResponses(app, check, (problem) => socketProblems.push(problem));
  const original = app.inject.bind(app) as (...args: unknown[]) => unknown;
  const inject = original as (options: InjectOptions | string) => Promise<LightMyRequestResponse>;
  const checkedInject = async (options: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const response = await inject(options);
    const { method, url } = response.raw.req;
    const problems = check.problems({
      method: method ?? 'GET',
      url: url ?? '/',
      status: response.statusCode,
      headers: response.headers,
      body: decoded(response.rawPayload, encodingOf(response.headers['content-encoding'])),
    });
    if (problems.length > 0) throw contractMismatch(problems);
    return response;
  };
  // Only the promise form is checked; the chained and callback forms (unused by these tests) pass through.
  app.inject = ((options?: InjectOptions | string, callback?: unknown) =>
    options === undefined || callback !== undefined
      ? original(options, callback)
      : checkedInject(options)) as FastifyInstance['inject'];
  const close = app.close.bind(app) as () => Promise<undefined>;
  app.close = (async () => {
    await close();
    if (socketProblems.length > 0) throw contractMismatch(socketProblems.splice(0));
  }) as unknown as FastifyInstance['close'];
  return app;
}

/** buildApp, with every response checked against the app's OpenAPI document. */
export async function buildCheckedApp(config: Config, dependencies: AppDependencies = {}): Promise<FastifyInstance> {
  return checkResponses(await buildApp(config, dependencies));
}
