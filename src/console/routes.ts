/**
 * GET /console: the operator console, a page and two hashed assets built by scripts/build-console.ts. It holds no
 * rule of its own: it calls the public API with the operator's token, as any client does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { failure } from '../http/errors.js';
import { addVary } from '../http/vary.js';
import { findConsoleBuild, loadConsoleFiles, type ConsoleFile } from './assets.js';
import { CONSOLE_CONTENT_SECURITY_POLICY } from './content-security-policy.js';

export const CONSOLE_PATH = '/console' as const;

/** The best encoding the client accepts of those we hold (q=0 refuses one). */
function encodingFor(request: FastifyRequest): 'br' | 'gzip' | undefined {
  const accepted = String(request.headers['accept-encoding'] ?? '')
    .split(',')
    .map((part) => part.trim().split(';'))
    .filter(([, q]) => q === undefined || !/^q=0(\.0*)?$/.test(q.trim()))
    .map(([name]) => name?.toLowerCase());
  if (accepted.includes('br')) return 'br';
  if (accepted.includes('gzip')) return 'gzip';
  return undefined;
}

function send(request: FastifyRequest, reply: FastifyReply, file: ConsoleFile, immutable: boolean) {
  void reply.headers({
    'content-type': file.type,
    'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    etag: file.etag,
  });
  // Appended: with CORS on, Vary already lists Origin, and a shared cache must key on both.
  void addVary(reply, 'accept-encoding');
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  const encoding = encodingFor(request);
  if (encoding !== undefined) void reply.header('content-encoding', encoding);
  return reply.send(encoding === 'br' ? file.brotli : encoding === 'gzip' ? file.gzip : file.identity);
}

export const consolePage = fp(
  async (app: FastifyInstance) => {
    let files: Map<string, ConsoleFile> | undefined;
    const built = (): Map<string, ConsoleFile> => {
      if (files !== undefined) return files;
      const dir = findConsoleBuild();
      if (dir === undefined) throw failure('CONSOLE_NOT_BUILT');
      files = loadConsoleFiles(dir);
      return files;
    };
    const index = async (request: FastifyRequest, reply: FastifyReply) => {
      const page = built().get('index.html');
      if (page === undefined) throw failure('CONSOLE_NOT_BUILT');
      return send(request, reply, page, false);
    };
    app.get(CONSOLE_PATH, index);
    app.get(`${CONSOLE_PATH}/`, index);
    app.get<{ Params: { file: string } }>(`${CONSOLE_PATH}/assets/:file`, async (request, reply) => {
      const file = built().get(`assets/${request.params.file}`);
      if (file === undefined) throw failure('ROUTE_NOT_FOUND', ['GET', request.url]);
      return send(request, reply, file, true);
    });
  },
  { name: 'console', dependencies: ['system'] },
);
