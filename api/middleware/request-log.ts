// One JSON log line per request. Secrets in the URL, referrer and headers are
// removed by the logger's redaction format, not here.
import { randomUUID } from 'node:crypto'
import type { Ctx, Middleware } from '../context.js'

export function requestLog(): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint()
    ctx.state.requestId = ctx.get('x-request-id').slice(0, 100) || randomUUID()
    ctx.state.input = {}
    ctx.set('X-Request-Id', ctx.state.requestId)
    try {
      await next()
    } finally {
      // winston formats (and redacts) a line before its transport filters it by level: skip that work when the line would be dropped.
      if (ctx.deps.log.isLevelEnabled('info')) logRequest(ctx, started)
    }
  }
}

function logRequest(ctx: Ctx, started: bigint): void {
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
