/**
 * One HTTP attempt. node:http(s) rather than fetch, because only they take our own DNS
 * lookup, so the SSRF check runs on the address connected to at every attempt. Redirects are
 * not followed: that would send the signed payload somewhere the subscriber never registered.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPublicAddress, parseWebhookUrl, type UrlPolicy } from './url-policy.js';

export interface SendRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
  readonly policy: UrlPolicy;
  /** Aborts the attempt (used on shutdown). */
  readonly signal?: AbortSignal;
}

export interface SendResult {
  /** The response status; undefined when no response came. */
  readonly status?: number;
  readonly latencyMs: number;
  /** Why the attempt did not acknowledge; undefined for a 2xx. */
  readonly error?: string;
  /** True when `signal` cut the attempt short. */
  readonly interrupted: boolean;
  /** The head of the response body (see responseExcerpt) and its Content-Type, when a response came. */
  readonly responseBody?: string;
  readonly responseContentType?: string;
}

/** How much of a response body the delivery log keeps: enough for an error message, never a whole page. */
export const RESPONSE_BODY_BYTES = 1024;

/** How long the response body may keep draining after its status arrived. */
const DRAIN_GRACE_MS = 1000;

/**
 * The first RESPONSE_BODY_BYTES of a response body as text any store keeps: decoded as UTF-8, each byte sequence
 * that is not UTF-8 (and a character cut at the limit) as U+FFFD, and each NUL too, which PostgreSQL's text refuses
 * ("invalid byte sequence for encoding UTF8: 0x00"). A binary answer (gzip, an image) is shown, not stored as-is.
 */
export function responseExcerpt(body: Buffer): string {
  return body.subarray(0, RESPONSE_BODY_BYTES).toString('utf8').replaceAll('\0', '\uFFFD');
}

export function isAcknowledgement(status: number | undefined): boolean {
  return status !== undefined && status >= 200 && status <= 299;
}

function describe(error: unknown, timeoutMs: number): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === 'EWEBHOOKTIMEOUT') return `timeout: no response within ${timeoutMs} ms`;
  if (code === 'EWEBHOOKPRIVATE') return `refused by the SSRF policy: ${String(message)}`;
  if (typeof code === 'string') return `${code}: ${String(message)}`;
  return String(message ?? error);
}

export function sendWebhook(request: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const settle = (result: Omit<SendResult, 'latencyMs'>, latencyMs = elapsed()) => {
      if (settled) return;
      settled = true;
      resolve({ ...result, latencyMs });
    };
    let url: URL;
    try {
      url = parseWebhookUrl(request.url);
    } catch (error) {
      settle({ error: `invalid url: ${(error as Error).message}`, interrupted: false });
      return;
    }
    // Node connects to an IP literal without calling `lookup`, so the connect-time
    // check is made here for those (the policy may have changed since subscribing).
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (!request.policy.allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) {
      settle({
        error: `refused by the SSRF policy: ${literal} is a private, loopback or reserved address`,
        interrupted: false,
      });
      return;
    }
    if (request.signal?.aborted === true) {
      settle({ error: 'interrupted: the service was shutting down', interrupted: true });
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      lookup: guardedLookup(request.policy),
      // A fresh connection per attempt: no pooled socket outlives the checks above.
      agent: false,
      signal: request.signal,
    });
    const deadline = setTimeout(() => {
      req.destroy(Object.assign(new Error('timeout'), { code: 'EWEBHOOKTIMEOUT' }));
    }, request.timeoutMs);
    req.on('response', (response) => {
      clearTimeout(deadline);
      // The latency is to the status line; the body's head is read after it, for the log.
      const latencyMs = elapsed();
      const status = response.statusCode ?? 0;
      const acknowledged = isAcknowledgement(status);
      const error = acknowledged
        ? undefined
        : `the subscriber answered ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`;
      const contentType = response.headers['content-type'];
      const chunks: Buffer[] = [];
      let kept = 0;
      const finish = () =>
        settle(
          {
            status,
            ...(error === undefined ? {} : { error }),
            interrupted: false,
            responseBody: responseExcerpt(Buffer.concat(chunks)),
            ...(contentType === undefined ? {} : { responseContentType: contentType.slice(0, 200) }),
          },
          latencyMs,
        );
      // Read up to the head of the body and drop the rest so the connection closes cleanly, but never wait on
      // a subscriber that keeps streaming.
      const drain = setTimeout(() => {
        finish();
        response.destroy();
      }, DRAIN_GRACE_MS);
      response.on('data', (chunk: Buffer) => {
        if (kept >= RESPONSE_BODY_BYTES) return;
        chunks.push(chunk);
        kept += chunk.length;
        if (kept >= RESPONSE_BODY_BYTES) finish();
      });
      response.on('end', finish);
      response.on('close', () => {
        clearTimeout(drain);
        finish();
      });
      response.on('error', () => {});
    });
    req.on('error', (error) => {
      clearTimeout(deadline);
      if (request.signal?.aborted === true)
        settle({ error: 'interrupted: the service was shutting down', interrupted: true });
      else settle({ error: describe(error, request.timeoutMs), interrupted: false });
    });
    req.end(request.body);
  });
}
