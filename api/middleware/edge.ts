// The network-edge User-Agent block of interface 5.5. It runs before
// everything else and answers like the edge would: no service error body.
import type { Middleware } from '../context.js'

export function edgeBlock(blockedPrefixes: readonly string[]): Middleware {
  return async (ctx, next) => {
    const ua = ctx.get('user-agent')
    if (ua && blockedPrefixes.some((p) => ua.startsWith(p))) {
      ctx.status = 403
      ctx.type = 'text/plain'
      ctx.body = 'error code: 1010'
      return
    }
    await next()
  }
}
