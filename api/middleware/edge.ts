// The network-edge User-Agent block of docs/decisions.md §I-5.5. It runs before
// everything else and answers like the edge would: no service error body.
import type { Ctx } from '../context.js'

/** Whether a User-Agent is one the edge blocks. */
export function blockedAgent(ua: string | undefined, blockedPrefixes: readonly string[]): boolean {
  return !!ua && blockedPrefixes.some((p) => ua.startsWith(p))
}

/** Answers the request as the edge would when its User-Agent is blocked; true when it did. */
export function edgeBlocked(ctx: Ctx, blockedPrefixes: readonly string[]): boolean {
  if (!blockedAgent(ctx.get('user-agent'), blockedPrefixes)) return false
  ctx.status = 403
  ctx.type = 'text/plain'
  ctx.body = 'error code: 1010'
  return true
}
