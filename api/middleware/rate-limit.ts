// Per-account request rate (docs/decisions.md §5), shared by every API
// process through Redis. Sets the RateLimit-* headers on every answer.
import { rateLimited, unavailable } from '../../shared/errors.js'
import type { Account } from '../../shared/accounts/repo.js'
import { planOf } from '../../shared/plans.js'
import type { RateDecision } from '../../shared/ingest/limits.js'
import type { Ctx, Middleware } from '../context.js'

/**
 * Takes one request from the account's budget, or throws 429. Undefined when this process's lease decided it
 * (a busy account, in memory, no promise to wait for); else a promise of the decision in Redis.
 */
export function enforceRate(ctx: Ctx, account: Account): Promise<void> | undefined {
  const plan = planOf(account.plan)
  const leased = ctx.deps.limits.takeLeasedRequest(account.id, plan)
  if (leased) return void answerRate(ctx, leased)
  return ctx.deps.limits.takeRequest(account.id, plan).then(
    (decision) => answerRate(ctx, decision),
    (err: Error) => {
      // A read needs nothing of Redis but this count: while Redis cannot be reached (an outage, a cluster failing
      // over) reads are answered uncounted rather than refused. A write cannot be accepted without Redis anyway.
      if ((ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.deps.outages.report(err) === 'redis') return
      throw unavailable(`rate limiter unavailable: ${err.message}`)
    },
  )
}

function answerRate(ctx: Ctx, decision: RateDecision): void {
  ctx.set('RateLimit-Limit', String(decision.limit))
  ctx.set('RateLimit-Remaining', String(decision.remaining))
  ctx.set('RateLimit-Reset', String(decision.resetSeconds))
  if (!decision.allowed) throw rateLimited(1) // a token comes back within a second at every plan's rate
}

/** The same, as middleware for v1 routes (after auth). */
export function rateLimit(): Middleware {
  return async (ctx, next) => {
    const wait = ctx.state.account && enforceRate(ctx, ctx.state.account)
    if (wait) await wait
    await next()
  }
}
