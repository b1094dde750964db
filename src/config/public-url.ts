/** PUBLIC_URL: the URL clients reach the service at, when a proxy puts it somewhere the service cannot see. */
import { ConfigError, type Source } from './errors.js';

/** The URL without a trailing slash, or undefined when unset (the request's own origin is used then). */
export function publicUrl(source: Source): string | undefined {
  const raw = (source.PUBLIC_URL ?? '').trim();
  if (raw === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    !['http:', 'https:'].includes(url.protocol) ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== ''
  ) {
    throw new ConfigError(
      `PUBLIC_URL must be an http:// or https:// URL with no query, fragment or credentials, like https://plants.example.com (got '${raw}')`,
    );
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
