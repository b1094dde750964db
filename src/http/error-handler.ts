/**
 * Every failure leaves the service as an Error record from the catalogue: ours
 * (ApiError), Fastify's own (bad media type, body too large...), validation
 * failures, store outages (503) and anything unexpected (500, with nothing of the
 * fault disclosed beyond the request id).
 */
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, Errors, ErrorSchema, failure, type CatalogueEntry } from './errors.js';
import { ReadTimeLimitError, StoreUnavailableError } from '../store/errors.js';
import { notJsonError } from './json-body.js';
import { validationFailure } from './validation.js';

/** Seconds a client should wait before retrying while the store is unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 2;

// Fastify's own client errors, mapped onto our catalogue.
const FASTIFY_ERRORS: Record<string, CatalogueEntry> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: Errors.UNSUPPORTED_MEDIA_TYPE,
  FST_ERR_CTP_BODY_TOO_LARGE: Errors.BODY_TOO_LARGE,
  FST_ERR_CTP_EMPTY_JSON_BODY: Errors.BODY_REQUIRED,
};

function fastifyClientError(error: FastifyError, request: FastifyRequest, bodyLimit: number): ApiError | undefined {
  const entry = FASTIFY_ERRORS[error.code];
  if (entry === Errors.UNSUPPORTED_MEDIA_TYPE) return notJsonError(request);
  if (entry === Errors.BODY_TOO_LARGE) return failure('BODY_TOO_LARGE', [bodyLimit]);
  if (entry === Errors.BODY_REQUIRED) return failure('BODY_REQUIRED');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return failure('BAD_REQUEST', [error.message]);
  return undefined;
}

export function toApiError(error: FastifyError, request: FastifyRequest, bodyLimit: number): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof ReadTimeLimitError) {
    return failure('READ_TIME_LIMIT', [String(error.limitMs)], { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) });
  }
  if (error instanceof StoreUnavailableError) {
    return failure('STORE_UNAVAILABLE', [], {
      'retry-after': String(STORE_RETRY_AFTER_SECONDS),
    });
  }
  if (error.validation !== undefined) {
    const part = error.validationContext ?? 'body';
    if (part === 'body' && request.body === undefined) {
      return failure('BODY_REQUIRED');
    }
    return validationFailure(error.validation, part);
  }
  return fastifyClientError(error, request, bodyLimit);
}

/** Statuses whose answers always carry Retry-After (the document marks it required): a failure that names no delay
 * of its own gets the store's. */
const RETRIED = new Set([429, 503]);

function sendError(reply: FastifyReply, error: ApiError): void {
  void reply.code(error.statusCode).headers(error.headers);
  if (RETRIED.has(error.statusCode) && !reply.hasHeader('retry-after'))
    void reply.header('retry-after', String(STORE_RETRY_AFTER_SECONDS));
  void reply.send(error.toRecord());
}

export const errorRecords = fp(
  async (app: FastifyInstance, { bodyLimit }: { bodyLimit: number }) => {
    app.addSchema(ErrorSchema);
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const apiError = toApiError(error, request, bodyLimit);
      if (apiError !== undefined) {
        // The record says only "unavailable"; the log says why (a full disk, a corrupt file...).
        if (apiError.statusCode >= 500) request.log.warn({ err: error }, `store unavailable: ${error.message}`);
        sendError(reply, apiError);
        return;
      }
      request.log.error({ err: error }, 'unexpected error');
      sendError(reply, failure('INTERNAL', [request.id]));
    });

    app.setNotFoundHandler((request, reply) => sendError(reply, routeNotFound(request.method, request.url)));
  },
  { name: 'error-records' },
);

/** The 404 for a path no operation serves (the query string is left out). */
export function routeNotFound(method: string, url: string): ApiError {
  const path = url.split('?')[0] ?? '';
  return failure('ROUTE_NOT_FOUND', [method, path.slice(0, 200)]);
}
