// The network-edge User-Agent block of docs/decisions.md §I-5.5. It runs before
// everything else and answers like the edge would: no service error body.
import type { Ctx } from '../context.js'

/** Answers the request as the edge would when its User-Agent is blocked; true when it did. */
export function edgeBlocked(ctx: Ctx, blockedPrefixes: readonly string[]): boolean {
  const ua = ctx.get('user-agent')
  if (!ua || !blockedPrefixes.some((p) => ua.startsWith(p))) return false
  ctx.status = 403
  ctx.type = 'text/plain'
  ctx.body = 'error code: 1010'
  return true
}
