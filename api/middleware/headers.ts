// Headers every response carries: no MIME sniffing, and no caching unless a
// route says otherwise. no-store by default rather than on a list of routes,
// because responses that carry a secret (a new API key, a share token, an
// alert's signing secret, a session's CSRF token) are easy to add and forget.
import type { Ctx } from '../context.js'

/** The headers themselves (api/direct-writes.ts writes them without Koa). */
export const SECURITY_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' } as const

export function setSecurityHeaders(ctx: Ctx): void {
  ctx.set('X-Content-Type-Options', SECURITY_HEADERS['X-Content-Type-Options'])
  ctx.set('Cache-Control', SECURITY_HEADERS['Cache-Control'])
}
