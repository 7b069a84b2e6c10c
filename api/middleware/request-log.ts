// One JSON log line per request. Secrets in the URL, referrer and headers are
// removed by the logger's redaction format, not here.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Logger } from '../../shared/log.js'
import type { Ctx } from '../context.js'

/** The client's X-Request-Id (at most 100 characters), or a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return (typeof given === 'string' ? given.slice(0, 100) : '') || randomUUID()
}

/** Gives the request its id (the client's X-Request-Id, or a new one) and returns when it started. */
export function startRequest(ctx: Ctx): bigint {
  ctx.state.requestId = requestIdOf(ctx.req)
  ctx.state.input = {}
  ctx.set('X-Request-Id', ctx.state.requestId)
  return process.hrtime.bigint()
}

export function logRequest(ctx: Ctx, started: bigint): void {
  // winston formats (and redacts) a line before its transport filters it by level: skip that work when the line would be dropped.
  if (!ctx.deps.log.isLevelEnabled('info')) return
  requestLine(ctx.deps.log, ctx.req, {
    requestId: ctx.state.requestId,
    url: ctx.originalUrl,
    status: ctx.status,
    started,
    accountId: ctx.state.account?.id,
  })
}

/** The request's log line (the caller checked that info lines are kept): also what api/direct-writes.ts logs. */
export function requestLine(
  log: Logger,
  req: IncomingMessage,
  r: { requestId: string; url: string; status: number; started: bigint; accountId: string | undefined },
): void {
  const ms = Number(process.hrtime.bigint() - r.started) / 1e6
  log.info('request', {
    request_id: r.requestId,
    method: req.method,
    url: r.url,
    status: r.status,
    ms: Math.round(ms * 10) / 10,
    referrer: req.headers.referrer || req.headers.referer || undefined,
    user_agent: req.headers['user-agent'] || undefined,
    account_id: r.accountId,
  })
}
