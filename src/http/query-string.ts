/**
 * What a query string must be before validation, which the schema cannot say: no malformed %-escape (Fastify
 * keeps `tag=%FF` as if it meant something), and no repeated parameter unless its schema is an array (else its
 * type error would hide the repetition). Only the operation's own parameters are checked.
 */
import type { FastifyInstance, preValidationHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { failure } from './errors.js';

function decoded(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** Why the query string is refused, or undefined. */
export function queryStringProblem(
  query: string,
  parameters: ReadonlySet<string>,
  repeatable: ReadonlySet<string> = new Set(),
): string | undefined {
  const given = new Set<string>();
  for (const pair of query.split('&')) {
    const equals = pair.indexOf('=');
    const name = decoded(equals === -1 ? pair : pair.slice(0, equals));
    if (name === undefined || !parameters.has(name)) continue;
    if (given.has(name) && !repeatable.has(name)) return `${name} is given more than once`;
    given.add(name);
    if (equals !== -1 && decoded(pair.slice(equals + 1)) === undefined)
      return `${name} must be valid percent-encoded UTF-8`;
  }
  return undefined;
}

function checkQueryString({ names, repeatable }: QueryParameters): preValidationHookHandler {
  const known = new Set(names);
  const once = names.filter((name) => !repeatable.has(name));
  return (request, _reply, done) => {
    // The common case, no escapes and no repeats, is told from what Fastify parsed
    // already: a repeated parameter is an array there.
    const start = request.url.indexOf('?');
    const query = request.query;
    const repeated =
      typeof query === 'object' && query !== null && once.some((name) => Array.isArray(Reflect.get(query, name)));
    const problem =
      start !== -1 && (repeated || request.url.includes('%', start))
        ? queryStringProblem(request.url.slice(start + 1), known, repeatable)
        : undefined;
    done(problem === undefined ? undefined : failure('INVALID_PARAMETER', [problem]));
  };
}

interface QueryParameters {
  readonly names: readonly string[];
  /** Those whose schema is an array. */
  readonly repeatable: ReadonlySet<string>;
}

function queryParameters(route: RouteOptions): QueryParameters {
  const query = route.schema?.querystring;
  const properties: unknown =
    typeof query === 'object' && query !== null ? Reflect.get(query, 'properties') : undefined;
  if (typeof properties !== 'object' || properties === null) return { names: [], repeatable: new Set() };
  const entries = Object.entries(properties as Record<string, { type?: unknown }>);
  return {
    names: entries.map(([name]) => name),
    repeatable: new Set(entries.filter(([, schema]) => schema.type === 'array').map(([name]) => name)),
  };
}

/** Holds the query string of every route with query parameters to the rules above. */
export const queryStringRules = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      const parameters = queryParameters(route);
      if (parameters.names.length === 0) return;
      const existing = route.preValidation;
      const check = checkQueryString(parameters);
      route.preValidation = existing === undefined ? [check] : [check, ...[existing].flat()];
    });
  },
  { name: 'query-string-rules' },
);
