/**
 * Secrets clients put where they do not belong. The token belongs in the
 * Authorization header (never logged), but a client may also send it in the URL
 * (`?access_token=...`, or pasted into a path), and the URL is logged with every
 * request. Anything shaped like a Plant Store token, and the value of any query
 * parameter named like a credential, is cut out before a URL is logged.
 */
const TOKEN_SHAPED = /pst_[A-Za-z0-9_-]+/g;
const CREDENTIAL_PARAMETER = /([?&][^=&]*(?:token|secret|password|passwd|api[_-]?key|auth)[^=&]*=)[^&#]*/gi;
const MIGHT_HOLD_A_SECRET = /pst_|[?&][^=&]*(?:token|secret|pass|key|auth)/i;

export function redactUrl(url: string): string {
  // The common case (no token-like text, no credential-like parameter) costs one test.
  if (!MIGHT_HOLD_A_SECRET.test(url)) return url;
  return url.replace(TOKEN_SHAPED, 'pst_[redacted]').replace(CREDENTIAL_PARAMETER, '$1[redacted]');
}
