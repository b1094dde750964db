/**
 * REQUEST_TIMEOUT_MS bounds the time a request takes to arrive, except on routes that take a long upload
 * (`config.steadyUpload`: POST /plants/import), where the body must instead keep arriving at IMPORT_MIN_RATE:
 * a 1 GiB import at a good rate takes minutes, and Node's own request timeout, one total for every request,
 * cut it off at 30 s (about 100 MB on a fast link).
 *
 * So Node's timeout is off (server-options.ts) and this plugin does its work: once a second it looks at the
 * requests whose body has not all arrived, and hands those past their deadline to the server's clientError
 * handler, exactly as Node's timeout did (client-errors.ts answers 408 and closes). For a steady upload, only
 * the time the client owes the next byte counts: while the service holds the body back (staging a chunk, the
 * store busy), the client cannot send, and that time is not held against it.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body may take longer than REQUEST_TIMEOUT_MS while it arrives at IMPORT_MIN_RATE (request-deadlines.ts). */
    steadyUpload?: boolean;
  }
}

/** How often deadlines are checked: Node's own check ran as often (server-options.ts). */
const CHECK_INTERVAL_MS = 1000;

export interface RequestDeadlineOptions {
  readonly requestTimeoutMs: number;
  /** Bytes a second a steady upload must keep to, over each REQUEST_TIMEOUT_MS of the client's time. */
  readonly minUploadBytesPerSecond: number;
}

interface Upload {
  /** socket.bytesRead when the current window began. */
  windowStartBytes: number;
  /** Time in the current window the client owed the next bytes (the service was not holding it back). */
  owedMs: number;
  /** When the time up to now was last added up. */
  countedTo: number;
}

interface Arriving {
  readonly started: number;
  upload?: Upload;
}

/** The service is not reading: a full buffer or a paused socket, so the client cannot send (idle-connections.ts). */
function heldBack(request: IncomingMessage): boolean {
  return request.socket.isPaused() || request.readableLength >= request.readableHighWaterMark;
}

function hasBody({ headers }: IncomingMessage): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export class UploadTooSlowError extends Error {
  readonly code = 'PLANTSTORE_UPLOAD_TOO_SLOW';
}

export const requestDeadlines = fp(
  async (app: FastifyInstance, { requestTimeoutMs, minUploadBytesPerSecond }: RequestDeadlineOptions) => {
    const server = app.server;
    const arriving = new Map<IncomingMessage, Arriving>();

    // Only requests with a body are followed (a request without one is complete once its head is in, which
    // HEADERS_TIMEOUT_MS bounds), and each only until its body ends: a request kept until the next check would
    // outlive the young generation, and promoting every GET cost the event loop measurably (bench/README.md).
    server.on('request', (request: IncomingMessage) => {
      if (request.complete || !hasBody(request)) return;
      arriving.set(request, { started: Date.now() });
      request.once('end', () => arriving.delete(request));
    });

    // Marked in onRequest, which runs at once after the 'request' event, before any body is read.
    app.addHook('onRoute', (route) => {
      if (route.config?.steadyUpload !== true) return;
      const mark = (request: { raw: IncomingMessage }, _reply: unknown, done: () => void) => {
        const entry = arriving.get(request.raw);
        if (entry !== undefined)
          entry.upload = { windowStartBytes: request.raw.socket.bytesRead, owedMs: 0, countedTo: Date.now() };
        done();
      };
      const existing = route.onRequest;
      route.onRequest = existing === undefined ? [mark] : [mark, ...(Array.isArray(existing) ? existing : [existing])];
    });

    const expire = (request: IncomingMessage, error: Error) => {
      arriving.delete(request);
      server.emit('clientError', error, request.socket);
    };

    const check = () => {
      const now = Date.now();
      for (const [request, entry] of arriving) {
        if (request.complete || request.socket.destroyed) {
          arriving.delete(request);
          continue;
        }
        const { upload } = entry;
        if (upload === undefined) {
          if (now - entry.started >= requestTimeoutMs)
            expire(request, Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }));
          continue;
        }
        if (!heldBack(request)) upload.owedMs += now - upload.countedTo;
        upload.countedTo = now;
        if (upload.owedMs < requestTimeoutMs) continue;
        const received = request.socket.bytesRead - upload.windowStartBytes;
        const needed = (minUploadBytesPerSecond * upload.owedMs) / 1000;
        if (received < needed) {
          const seconds = Math.round(upload.owedMs / 100) / 10;
          expire(
            request,
            new UploadTooSlowError(
              `the upload arrived at ${Math.round(received / (upload.owedMs / 1000))} bytes/s over the last ${seconds} s; ` +
                `it must keep to at least ${minUploadBytesPerSecond} bytes/s (IMPORT_MIN_RATE)`,
            ),
          );
          continue;
        }
        upload.windowStartBytes = request.socket.bytesRead;
        upload.owedMs = 0;
      }
    };
    const timer = setInterval(check, Math.min(CHECK_INTERVAL_MS, requestTimeoutMs));
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'request-deadlines' },
);
