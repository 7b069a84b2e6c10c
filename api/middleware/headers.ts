// Headers every response carries: no MIME sniffing, and no caching unless a
// route says otherwise. no-store by default rather than on a list of routes,
// because responses that carry a secret (a new API key, a share token, an
// alert's signing secret, a session's CSRF token) are easy to add and forget.
import type { Ctx } from '../context.js'

export function setSecurityHeaders(ctx: Ctx): void {
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('Cache-Control', 'no-store')
}
