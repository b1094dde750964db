/**
 * Response compression (@fastify/compress): the /docs script (4.35 MB, about 1.2 MB with gzip), the OpenAPI
 * document, large pages and CSV exports travel compressed to clients that accept it. Bodies under 1 KiB
 * (a plant, an Error record) are left alone: compressing them saves nothing and costs every request time
 * (bench/README.md). The event stream is never compressed (the library leaves text/event-stream out), so
 * each event reaches its reader at once. Request bodies are not decompressed: a body with a Content-Encoding
 * is refused with 415, as before.
 */
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const COMPRESSION_THRESHOLD_BYTES = 1024;

export const responseCompression = fp(
  async (app: FastifyInstance) => {
    await app.register(compress, {
      threshold: COMPRESSION_THRESHOLD_BYTES,
      globalDecompression: false,
      // gzip and brotli at the library's quick settings; every client takes gzip.
      encodings: ['br', 'gzip'],
    });
  },
  { name: 'response-compression' },
);
