// One JSON log line per request. Secrets in the URL, referrer and headers are
// removed by the logger's redaction format, not here.
import { randomUUID } from 'node:crypto'
import type { Ctx } from '../context.js'

/** Gives the request its id (the client's X-Request-Id, or a new one) and returns when it started. */
export function startRequest(ctx: Ctx): bigint {
  ctx.state.requestId = ctx.get('x-request-id').slice(0, 100) || randomUUID()
  ctx.state.input = {}
  ctx.set('X-Request-Id', ctx.state.requestId)
  return process.hrtime.bigint()
}

export function logRequest(ctx: Ctx, started: bigint): void {
  // winston formats (and redacts) a line before its transport filters it by level: skip that work when the line would be dropped.
  if (!ctx.deps.log.isLevelEnabled('info')) return
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  ctx.deps.log.info('request', {
    request_id: ctx.state.requestId,
    method: ctx.method,
    url: ctx.originalUrl,
    status: ctx.status,
    ms: Math.round(ms * 10) / 10,
    referrer: ctx.get('referer') || undefined,
    user_agent: ctx.get('user-agent') || undefined,
    account_id: ctx.state.account?.id,
  })
}
