/**
 * GET /docs: Scalar's renderer reading our /openapi.json. Every asset comes from this service: the `cdn`
 * option (jsDelivr) stays unset, and the options below switch off fonts, telemetry and the hosted AI and MCP
 * features; the Content-Security-Policy enforces it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { addVary } from '../http/vary.js';
import { CompressedAssets, preferredEncoding } from './compressed-assets.js';
import { docsContentSecurityPolicy, inlineScriptHashes } from './content-security-policy.js';
import { LazyDocsApp } from './lazy-docs-app.js';

export const DOCS_PATH = '/docs' as const;

const SCALAR_CONFIGURATION = {
  url: '/openapi.json',
  pageTitle: 'Plant Store API reference',
  // Inline, so the browser does not ask the API for /favicon.ico (a 404 in the logs).
  favicon: `data:image/svg+xml,${encodeURIComponent("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><path d='M8 15V7M8 9C8 5 4 3 1 4c0 4 3 6 7 5zm0-2c0-3 3-5 7-4 0 3-3 5-7 4z' fill='#2e7d32' stroke='#2e7d32'/></svg>")}`,
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  // The token a reader pastes stays in the page; it is not written to localStorage.
  persistAuth: false,
  authentication: { preferredSecurityScheme: 'bearerAuth' },
  defaultOpenAllTags: true,
  documentDownloadType: 'json',
  hideClientButton: false,
} as const;

/** Security headers for the docs routes; the HTML's policy allows its own inline script by hash. */
function docsHeaders(): (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown> {
  let lastHtml: string | undefined;
  let lastPolicy = docsContentSecurityPolicy([]);
  const assets = new CompressedAssets();
  return async (request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '');
    if (typeof payload === 'string' && type.startsWith('text/html')) {
      if (payload !== lastHtml) {
        lastHtml = payload;
        lastPolicy = docsContentSecurityPolicy(inlineScriptHashes(payload));
      }
      void reply.header('cache-control', 'no-cache');
    } else if (type.includes('javascript')) {
      // The bundle changes only with the package version; let browsers keep it a while.
      void reply.header('cache-control', 'public, max-age=3600');
      const encoding = preferredEncoding(request.headers['accept-encoding']);
      void addVary(reply, 'Accept-Encoding');
      if (typeof payload === 'string' && encoding !== undefined) {
        const bytes = await assets.encoded(request.url, payload, encoding);
        void reply.headers({ 'content-encoding': encoding, 'content-length': bytes.length });
        payload = bytes;
      }
    }
    void reply.headers({
      'content-security-policy': lastPolicy,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'x-frame-options': 'DENY',
    });
    return payload;
  };
}

export const docsPage = fp(
  async (app: FastifyInstance) => {
    const scalar = new LazyDocsApp(DOCS_PATH, SCALAR_CONFIGURATION);
    const forward = (request: FastifyRequest, reply: FastifyReply) => scalar.forward(request, reply);
    // An encapsulated context, so the headers hook applies to the docs routes only,
    // and runs after any app-wide onSend hook (route-context hooks run last).
    await app.register(async (docs) => {
      docs.addHook('onSend', docsHeaders());
      docs.get(DOCS_PATH, forward);
      docs.get(`${DOCS_PATH}/*`, forward);
    });
  },
  { name: 'docs', dependencies: ['system'] },
);
