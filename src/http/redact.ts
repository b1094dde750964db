/**
 * URLs are logged, and clients sometimes put tokens in them: anything shaped like a Plant Store token, and any
 * credential-named query parameter's value (an event `ticket` too), is cut out before logging, plain or
 * percent-encoded.
 */
const TOKEN_SHAPED = /pst_[A-Za-z0-9_-]+/g;
const CREDENTIAL_PARAMETER = /([?&][^=&]*(?:token|secret|password|passwd|api[_-]?key|auth|ticket)[^=&]*=)[^&#]*/gi;
const MIGHT_HOLD_A_SECRET = /pst_|[?&][^=&]*(?:token|secret|pass|key|auth|ticket)/i;
const PERCENT_ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

function redactReadable(url: string): string {
  if (!MIGHT_HOLD_A_SECRET.test(url)) return url;
  return url.replace(TOKEN_SHAPED, 'pst_[redacted]').replace(CREDENTIAL_PARAMETER, '$1[redacted]');
}

/** %XX escapes decoded where they spell valid UTF-8; the rest left as written. */
function percentDecoded(url: string): string {
  return url.replace(PERCENT_ESCAPES, (escapes) => {
    try {
      return decodeURIComponent(escapes);
    } catch {
      return escapes;
    }
  });
}

export function redactUrl(url: string): string {
  // The common case (no token-like text, no credential-like parameter) costs one test.
  const redacted = redactReadable(url);
  if (!redacted.includes('%')) return redacted;
  // A secret may be percent-encoded (pst%5F..., %70st_...): look again once decoded, and
  // if the decoded URL still holds one, log it decoded with that cut out. The first pass
  // ran on the raw text, so a credential parameter's value was cut before a %26 in it
  // could be decoded into a separator.
  const decoded = percentDecoded(redacted);
  const again = redactReadable(decoded);
  return again === decoded ? redacted : again;
}
