/**
 * The base URL a client reached the service at: PUBLIC_URL when set (a proxy may change scheme, host
 * and path), else the request's own scheme and Host (X-Forwarded-* only from TRUST_PROXY's proxies).
 */
import type { FastifyRequest } from 'fastify';

// A host name, IPv4 or bracketed IPv6 address, and port: anything else in Host is not echoed into documents.
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** undefined when neither PUBLIC_URL nor a well-formed Host says where the service is. */
export function publicBaseUrl(request: FastifyRequest, configured: string | undefined): string | undefined {
  if (configured !== undefined) return configured;
  const host = request.host;
  if (typeof host !== 'string' || !HOST.test(host)) return undefined;
  return `${request.protocol}://${host}`;
}
