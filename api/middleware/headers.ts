// Headers every response carries: no MIME sniffing, and no caching unless a
// route says otherwise. no-store by default rather than on a list of routes,
// because responses that carry a secret (a new API key, a share token, an
// alert's signing secret, a session's CSRF token) are easy to add and forget.
import { createHash } from 'node:crypto'
import type { Middleware } from '../context.js'

export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff')
    ctx.set('Cache-Control', 'no-store')
    await next()
  }
}

const hashes = (html: string, tag: 'script' | 'style') =>
  [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => `'sha256-${createHash('sha256').update(m[1]).digest('base64')}'`).join(' ')

/**
 * A strict Content-Security-Policy for a page of ours with inline script and style: each inline block
 * is allowed by its hash, nothing else runs, and the page may only fetch from this origin.
 */
export function inlinePageCsp(html: string): string {
  return `default-src 'none'; script-src ${hashes(html, 'script') || "'none'"}; style-src ${hashes(html, 'style') || "'none'"}; ` +
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}
