/**
 * Which webhook URLs the service will call (SSRF defence): only public addresses, checked on
 * the resolved addresses at creation and at every delivery (through the socket's own lookup),
 * so a name re-pointed at 127.0.0.1 later is refused too. WEBHOOK_ALLOW_PRIVATE_URLS lifts it.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { URL_FORBIDDEN_CHARACTER } from '../domain/text-rules.js';

export class WebhookUrlError extends Error {}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

const NON_PUBLIC_IPV4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

// IPv6 forms that carry an IPv4 address in their low or middle bits, and reach it:
// IPv4-compatible (::a.b.c.d, deprecated), NAT64 (64:ff9b::a.b.c.d) and 6to4
// (2002:AABB:CCDD::). Each non-public IPv4 range is refused under each of them too.
// IPv4-mapped (::ffff:a.b.c.d) needs nothing: BlockList checks it against the IPv4 rules.
const IPV4_CARRIERS: ReadonlyArray<readonly [prefix: string, bitsBeforeIpv4: number]> = [
  ['::', 96],
  ['64:ff9b::', 96],
  ['2002::', 16],
];

const NON_PUBLIC_IPV6: ReadonlyArray<readonly [string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
];

/** `prefix` (an IPv6 network) with the IPv4 address written into it after `bitsBefore` bits. */
function carrying(prefix: string, bitsBefore: number, ipv4: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = ipv4.split('.').map(Number);
  const high = ((a << 8) | b).toString(16);
  const low = ((c << 8) | d).toString(16);
  return bitsBefore === 96 ? `${prefix}${high}:${low}` : `${prefix.slice(0, -1)}${high}:${low}::`;
}

const nonPublic = new BlockList();
for (const [network, prefix] of NON_PUBLIC_IPV4) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
  for (const [carrier, bitsBefore] of IPV4_CARRIERS)
    nonPublic.addSubnet(carrying(carrier, bitsBefore, network), bitsBefore + prefix, 'ipv6');
}
for (const [network, prefix] of NON_PUBLIC_IPV6) nonPublic.addSubnet(network, prefix, 'ipv6');

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !nonPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface UrlPolicy {
  readonly allowPrivate: boolean;
}

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
const H16 = '[0-9A-Fa-f]{1,4}';
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
/** RFC 3986's IPv6address, one alternative per line of its grammar. */
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
  `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
  `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
].join('|');
/** Its last label starts with a letter: a name ending in a number is read as an IPv4 address (WHATWG URL). */
const HOST_NAME = '(?:[A-Za-z0-9_-]+\\.)*[A-Za-z][A-Za-z0-9_-]*\\.?';
const PORT = '(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';
/** After the host: a path or query of anything but spaces, control characters and #. */
const PATH_AND_QUERY = '(?:[/?][^ #\\u0000-\\u001F\\u007F-\\u009F]*)?';

/**
 * The shape of a webhook URL, as the OpenAPI document states it (`pattern`, an ECMA-262 expression with the u
 * flag): http(s)://host[:port][/path][?query], the host an ASCII name (an internationalised one in its xn-- form),
 * a dotted IPv4 address or a bracketed IPv6 one. Every URL it matches, parseWebhookUrl accepts (a property test
 * checks), so what the schema accepts the service accepts, the SSRF policy aside.
 */
export const WEBHOOK_URL_PATTERN =
  // Slashes after the scheme as WHATWG reads them: any number of / or \\ (`HTTP:example.com` is http://example.com/).
  `^[Hh][Tt][Tt][Pp][Ss]?:[/\\\\]*(?:${HOST_NAME}|${IPV4}|\\[(?:${IPV6})\\])(?::${PORT})?${PATH_AND_QUERY}$`;
const WEBHOOK_URL = new RegExp(WEBHOOK_URL_PATTERN, 'u');

/** Said when a URL that parses is not of the documented shape. */
const SHAPE =
  'url must be http(s)://host[:port][/path][?query], the host a name of ASCII letters, digits, - and _ ' +
  '(an internationalised name in its xn-- form), a dotted IPv4 address or a bracketed IPv6 one';

/**
 * Every check a new URL gets before its addresses are looked at: parseWebhookUrl's, then WEBHOOK_URL_PATTERN.
 * (Deliveries check only parseWebhookUrl: URLs kept from before the pattern are still sent to.)
 */
export function checkWebhookUrlSyntax(raw: string): URL {
  const url = parseWebhookUrl(raw);
  if (!WEBHOOK_URL.test(raw)) throw new WebhookUrlError(SHAPE);
  return url;
}

/** Syntax checks that need no DNS: characters, scheme, credentials, length. */
export function parseWebhookUrl(raw: string): URL {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    throw new WebhookUrlError(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // new URL() would drop leading and trailing controls and tabs silently.
  if (URL_FORBIDDEN_CHARACTER.test(raw)) throw new WebhookUrlError('url must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError('url must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new WebhookUrlError(`url must use http or https, not ${url.protocol.slice(0, -1)}`);
  if (url.username !== '' || url.password !== '') throw new WebhookUrlError('url must not contain credentials');
  if (url.hash !== '') throw new WebhookUrlError('url must not contain a #fragment');
  if (url.port === '0') throw new WebhookUrlError('url port must be from 1 to 65535');
  return url;
}

type Lookup = (hostname: string, options: { all: true }) => Promise<LookupAddress[]>;

const lookupAll: Lookup = (hostname, options) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, options, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/** Full check at subscription time: syntax, then every address the host resolves to. */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy, lookup: Lookup = lookupAll): Promise<URL> {
  const url = checkWebhookUrlSyntax(raw);
  if (policy.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) !== 0 ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    throw new WebhookUrlError(`url host ${host} cannot be resolved`);
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused !== undefined) {
    throw new WebhookUrlError(
      `url host ${host} resolves to ${refused}, a private, loopback or reserved address; ` +
        'set WEBHOOK_ALLOW_PRIVATE_URLS=true to allow such destinations',
    );
  }
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses non-public addresses at connect time,
 * so the address checked is the address connected to.
 */
export function guardedLookup(policy: UrlPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const usable = policy.allowPrivate ? addresses : addresses.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to non-public addresses`), {
          code: 'EWEBHOOKPRIVATE',
        });
        return callback(refused, []);
      }
      if (options.all === true) return callback(null, usable);
      const first = usable[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
