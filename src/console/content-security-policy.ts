/**
 * The console's Content-Security-Policy: its own script and stylesheet files only (no inline script or style, no
 * eval), and requests to this origin only, so nothing is ever loaded from or sent to another host.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
