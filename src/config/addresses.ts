/**
 * HOST and TRUST_PROXY, checked when read: a bad value would otherwise fail later, in a
 * library, with a message that does not name the variable.
 */
import { isIP } from 'node:net';
import { ConfigError, type Source } from './errors.js';

const LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_NAME = new RegExp(`^${LABEL}(\\.${LABEL})*\\.?$`);

/** Addresses that listen on every interface, so they clash with any other on the same port. */
export const WILDCARD_HOSTS: readonly string[] = ['0.0.0.0', '::', ''];

/** An IP address, or a host name (RFC 1123; digits and dots alone would be a broken IPv4 address). */
export function host(source: Source, name: string, fallback: string): string {
  const raw = source[name] || fallback;
  if (isIP(raw) !== 0 || (raw.length <= 253 && HOST_NAME.test(raw) && !/^[\d.]+$/.test(raw))) return raw;
  throw new ConfigError(`${name} must be an IP address (e.g. 127.0.0.1, 0.0.0.0, ::) or a host name (got '${raw}')`);
}

/** An IPv4 or IPv6 address, optionally with a prefix length: what proxy-addr accepts as a trusted proxy. */
export function isAddressOrCidr(text: string): boolean {
  const [address = '', prefix, ...extra] = text.split('/');
  const version = isIP(address);
  if (version === 0 || extra.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}
