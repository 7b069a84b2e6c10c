// The one generic layer every request passes, in this order: the security headers, the edge's
// User-Agent block, the request id and log line, and the mapping of errors to answers. One async
// frame instead of four nested ones: each layer cost a closure call and a promise on every single
// write. The parts live beside it (headers.ts, edge.ts, request-log.ts, errors.ts).
import type { Middleware } from '../context.js'
import { edgeBlocked } from './edge.js'
import { answerError, answerUnrouted } from './errors.js'
import { setSecurityHeaders } from './headers.js'
import { logRequest, startRequest } from './request-log.js'

export function front(blockedUserAgents: readonly string[]): Middleware {
  return async (ctx, next) => {
    setSecurityHeaders(ctx)
    // Before everything else, as the edge would: no request id, no log line.
    if (edgeBlocked(ctx, blockedUserAgents)) return
    const started = startRequest(ctx)
    try {
      await next()
      answerUnrouted(ctx)
    } catch (thrown) {
      answerError(ctx, thrown)
    } finally {
      logRequest(ctx, started)
    }
  }
}
