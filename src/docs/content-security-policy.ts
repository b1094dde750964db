/**
 * The Content-Security-Policy of the /docs pages: everything from this origin,
 * nothing from anywhere else. It is what makes "no CDN, works offline" hold in
 * the browser, not just in our reading of the renderer's options: a font, script
 * or request to another host is refused.
 *
 * The page starts the renderer with one inline <script>; instead of allowing
 * inline scripts in general, the policy allows exactly that script by its hash.
 * Styles need 'unsafe-inline': the renderer sets style="" attributes, which
 * neither hashes nor nonces can allow.
 */
import { createHash } from 'node:crypto';

const INLINE_SCRIPT = /<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g;

/** 'sha256-...' sources for each inline script of an HTML page. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(INLINE_SCRIPT)].map(
    (match) =>
      `'sha256-${createHash('sha256')
        .update(match[1] ?? '')
        .digest('base64')}'`,
  );
}

export function docsContentSecurityPolicy(scriptHashes: readonly string[]): string {
  return [
    "default-src 'none'",
    `script-src 'self' ${scriptHashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    // 'Send' in the reference calls this same origin; nothing else.
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
