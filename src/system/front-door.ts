/**
 * GET /: what this service is and where to go next. A browser (Accept preferring text/html) gets a small
 * page with no script at all, under a policy that allows only its own stylesheet by hash; an API client
 * gets the same links as JSON.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { TypedRoutes } from '../http/type-provider.js';
import { addVary } from '../http/vary.js';
import { publicBaseUrl } from './public-origin.js';
import { SERVICE_VERSION } from './version.js';
import Negotiator from 'negotiator';

const LINKS = {
  docs: { path: '/docs', title: 'Interactive API reference' },
  console: { path: '/console', title: 'Console: browse and change plants in the browser' },
  openapi: { path: '/openapi.json', title: 'OpenAPI 3.1 description' },
  health: { path: '/healthz', title: 'Liveness' },
  readiness: { path: '/readyz', title: 'Readiness (the store answers), with the version' },
} as const;

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}' +
  'h1{color:#2e7d32;margin-bottom:0}p.version{color:#666;margin-top:0}li{margin:.3rem 0}code{background:#f3f3f3;padding:0 .2rem}';

const POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function page(base: string): string {
  const items = Object.values(LINKS)
    .map(
      ({ path, title }) => `<li><a href="${escapeHtml(base + path)}">${escapeHtml(path)}</a> ${escapeHtml(title)}</li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Plant Store</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Plant Store</h1>
<p class="version">version ${escapeHtml(SERVICE_VERSION)}</p>
<p>An HTTP service that stores plants: create them with an int64 id of your choosing, then list, find, read,
change, delete, import, export and watch them. Every plant operation needs <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<ul>
${items}
</ul>
</body>
</html>
`;
}

/** HTML only when the Accept header prefers it (read by `negotiator`); a client that takes anything (curl's * / *)
 * or sends no Accept gets JSON, the first offered. */
export function wantsHtml(request: FastifyRequest): boolean {
  const chosen = new Negotiator({ headers: { accept: request.headers.accept } }).mediaType([
    'application/json',
    'text/html',
  ]);
  return chosen === 'text/html';
}

const Link = {
  type: 'object',
  required: ['href', 'title'],
  properties: { href: { type: 'string' }, title: { type: 'string' } },
} as const;

const Home = {
  type: 'object',
  required: ['name', 'version', 'links'],
  properties: {
    name: { type: 'string' },
    version: { type: 'string', description: "The service's version." },
    links: {
      type: 'object',
      required: Object.keys(LINKS),
      properties: Object.fromEntries(Object.keys(LINKS).map((key) => [key, Link])),
    },
  },
} as const;

export const frontDoorRoutes: TypedRoutes = async (app) => {
  app.get(
    '/',
    {
      schema: {
        operationId: 'home',
        summary: 'What this service is, and where to go',
        description:
          'A browser (an `Accept` preferring `text/html`) gets a small page linking the reference, the console, the OpenAPI ' +
          'document and the health checks; any other client gets the same links as JSON, as full URLs (see `/openapi.json` ' +
          'for how the base URL is found).',
        tags: ['service'],
        security: [],
        response: {
          200: {
            description: 'The links.',
            content: {
              'application/json': {
                schema: { ...Home, examples: [{ name: 'Plant Store', version: '1.0.0', links: {} }] },
              },
              'text/html': { schema: { type: 'string', description: 'A page with the same links; no script.' } },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const base = publicBaseUrl(request, app.config.publicUrl) ?? '';
      void addVary(reply, 'Accept');
      if (wantsHtml(request)) {
        return reply
          .type('text/html; charset=utf-8')
          .header('content-security-policy', POLICY)
          .header('x-frame-options', 'DENY')
          .header('cache-control', 'no-cache')
          .send(page(base));
      }
      const links = Object.fromEntries(
        Object.entries(LINKS).map(([key, { path, title }]) => [key, { href: `${base}${path}`, title }]),
      );
      return reply
        .type('application/json; charset=utf-8')
        .send(JSON.stringify({ name: 'Plant Store', version: SERVICE_VERSION, links }));
    },
  );
};
