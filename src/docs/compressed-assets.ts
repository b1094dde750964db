/**
 * The /docs script (4.35 MB) compressed once per encoding and kept: compressing it for every request cost
 * 0.3 s (brotli) to 0.9 s (gzip) of CPU each time (bench/README.md). It changes only with the package, so the
 * bytes are keyed by path and size. Other answers are left to @fastify/compress, which skips an answer that
 * already has a Content-Encoding.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

export type AssetEncoding = 'br' | 'gzip';

/** brotli when the client takes it, else gzip, else none (a q=0 refuses an encoding). */
export function preferredEncoding(acceptEncoding: string | undefined): AssetEncoding | undefined {
  const accepted = new Set(
    (acceptEncoding ?? '')
      .split(',')
      .map((part) => part.trim().toLowerCase().split(';'))
      .filter(([, q]) => q === undefined || !/^\s*q=0(\.0*)?\s*$/.test(q))
      .map(([name]) => name?.trim()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

export class CompressedAssets {
  private readonly cache = new Map<string, Promise<Buffer>>();

  encoded(path: string, body: string, encoding: AssetEncoding): Promise<Buffer> {
    const key = `${encoding} ${path} ${body.length}`;
    let bytes = this.cache.get(key);
    if (bytes === undefined) {
      const input = Buffer.from(body);
      // The same quality @fastify/compress uses for brotli: 11 would take seconds for a few percent.
      bytes = encoding === 'br' ? brotli(input, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }) : gzipped(input);
      bytes.catch(() => this.cache.delete(key));
      this.cache.set(key, bytes);
    }
    return bytes;
  }
}
