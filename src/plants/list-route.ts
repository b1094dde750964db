/**
 * GET (and HEAD) /plants. Keyset pages (the Link header's cursor, never an offset), so a deep
 * page costs what the first does, and a walk sees each plant that exists throughout it
 * exactly once while others write.
 */
import { examplePlant } from '../domain/plant-words.js';
import { failure } from '../http/errors.js';
import { jsonText, type TypedRoutes } from '../http/type-provider.js';
import type { PlantCount, PlantFilter, PlantOrder } from '../store/types.js';
import { bearerAuth } from '../tokens/auth.js';
import { countPreference } from './count-preference.js';
import { FindQueryProperties, termsOf } from './find-parameters.js';
import { CURSOR_MAX_LENGTH, PageCursors, type CursorScope, type PagePosition } from './page-cursor.js';
import { Int64Id, StoredPlant } from './schemas.js';

export const LIST_DEFAULT_LIMIT = 100;
export const LIST_MAX_LIMIT = 1000;
const ORDERS = ['id', '-id', 'name', '-name'] as const satisfies readonly PlantOrder[];

const example = examplePlant(10);

const ListQuery = {
  type: 'object',
  properties: {
    limit: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: LIST_MAX_LIMIT,
      default: LIST_DEFAULT_LIMIT,
      description: `Maximum number of results (1 to ${LIST_MAX_LIMIT}; default ${LIST_DEFAULT_LIMIT}).`,
    },
    sort: {
      type: 'string',
      enum: ORDERS,
      default: 'id',
      description:
        'The order: `id` (ascending, the default), `-id`, `name` or `-name`. Names are compared folded (lower case, accents and other ' +
        'marks removed, so "Café" sorts with "cafe"), by Unicode code point, and plants with the same folded name by id: the order is total, ' +
        'and the same on every store.',
    },
    q: FindQueryProperties.q,
    tag: FindQueryProperties.tag,
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: CURSOR_MAX_LENGTH,
      description:
        "Where the page starts: the opaque cursor of the previous page's `Link` header. It is only valid with the same `sort`, `q` and `tag`, " +
        'and not together with `after`: either is a 400 INVALID_PARAMETER.',
    },
    after: {
      ...Int64Id,
      description:
        "With `sort=id` only: return only plants whose id is greater than this one. The `Link` header's `cursor` does this for every order. " +
        'With another `sort`, or beside `cursor`, it is a 400 INVALID_PARAMETER.',
    },
  },
} as const;

const ListHeaders = {
  type: 'object',
  properties: {
    prefer: {
      type: 'string',
      description:
        '`count=exact` adds `X-Total-Count`: how many plants match `q` and `tag` on all pages. `count=estimated` may answer from the ' +
        "database's statistics instead, when they estimate at least 10,000 plants (PostgreSQL; SQLite always counts). " +
        '`Preference-Applied` says which was done. Counting visits every matching plant, so ask only when you need it.',
    },
  },
} as const;

export const plantListRoutes: TypedRoutes<[typeof StoredPlant]> = async (app) => {
  // Read once, on the first list: the secret never changes (and a store that is down now is retried next time).
  let cursors: Promise<PageCursors> | undefined;
  const pageCursors = (): Promise<PageCursors> => {
    cursors ??= app.store.plants.pageCursorSecret().then((secret) => new PageCursors(secret));
    return cursors.catch((error: unknown) => {
      cursors = undefined;
      throw error;
    });
  };

  /** Where the page starts: after the cursor's plant, or after the `after` id. */
  async function startOf(
    query: { cursor?: string; after?: bigint },
    scope: CursorScope,
  ): Promise<PagePosition | undefined> {
    if (query.cursor !== undefined && query.after !== undefined)
      throw failure('INVALID_PARAMETER', ['give cursor or after, not both']);
    if (query.cursor !== undefined) return (await pageCursors()).decode(query.cursor, scope);
    if (query.after === undefined) return undefined;
    if (scope.order !== 'id')
      throw failure('INVALID_PARAMETER', [
        `after works only with sort=id; follow the Link header's cursor with sort=${scope.order}`,
      ]);
    return { id: query.after };
  }

  app.get(
    '/plants',
    {
      schema: {
        operationId: 'listPlants',
        summary: 'List and find plants',
        description:
          'Returns plants as a JSON array, in the `sort` order, searched by `q` and filtered by `tag` (all may be combined). Pages are ' +
          'keyset-paginated: when more plants follow, the `Link` header carries the next page\'s URL with `rel="next"` (RFC 8288) and an ' +
          'opaque `cursor`; it is absent on the last page. Following the links visits every matching plant exactly once, in order, also ' +
          'while plants are created and deleted (plants created or deleted during the walk may or may not appear), and a page deep in the ' +
          'walk costs what the first one does.\n\n' +
          '`HEAD /plants` with the same parameters answers the same headers without the page, e.g. with `Prefer: count=exact` to count.',
        tags: ['plants'],
        security: bearerAuth('plants:read'),
        querystring: ListQuery,
        headers: ListHeaders,
        response: {
          // The store builds the page's JSON itself: turning rows into objects and back cost more than the rest of the
          // request.
          200: jsonText(
            'A page of plants.',
            { type: 'array', items: { $ref: 'StoredPlant' }, examples: [[example]] },
            {
              Link: { type: 'string', description: 'The next page, as `<url>; rel="next"`; absent on the last page.' },
              'X-Total-Count': {
                type: 'integer',
                description:
                  'With `Prefer: count=...`: how many plants match, on all pages (an estimate if Preference-Applied says so).',
              },
              'Preference-Applied': {
                type: 'string',
                description:
                  'With `Prefer: count=...`: `count=exact`, or `count=estimated` when X-Total-Count is an estimate.',
              },
            },
          ),
        },
      },
      config: { failures: ['READ_TIME_LIMIT', 'STORE_UNAVAILABLE'] },
    },
    async (request, reply) => {
      const { limit, sort: order, q, tag: tags } = request.query;
      const filter: PlantFilter = { tags, terms: termsOf(q) };
      const scope: CursorScope = { order, ...filter };
      const start = await startOf(request.query, scope);
      const how = countPreference(request.headers.prefer);
      const [page, count] = await Promise.all([
        app.store.plants.listPlantsPage({ limit, order, ...filter, after: start?.id, afterKey: start?.key }),
        how === undefined ? undefined : app.store.plants.countPlants(filter, how),
      ]);
      if (page.hasMore && page.lastId !== undefined) {
        const next = new URLSearchParams({ limit: String(limit) });
        if (order !== 'id') next.set('sort', order);
        if (q !== undefined) next.set('q', q);
        for (const one of tags ?? []) next.append('tag', one);
        next.set('cursor', (await pageCursors()).encode({ id: page.lastId, key: page.lastKey }, scope));
        void reply.header('link', `</plants?${next.toString()}>; rel="next"`);
      }
      const vary = reply.getHeader('vary');
      void reply.header('vary', vary === undefined ? 'Prefer' : `${String(vary)}, Prefer`);
      if (count !== undefined) countHeaders(count).forEach(([name, value]) => void reply.header(name, value));
      return reply.type('application/json; charset=utf-8').send(page.json);
    },
  );
};

function countHeaders({ count, exact }: PlantCount): [string, string][] {
  return [
    ['x-total-count', String(count)],
    ['preference-applied', exact ? 'count=exact' : 'count=estimated'],
  ];
}
