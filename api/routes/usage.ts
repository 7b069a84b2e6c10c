// What the account uses of its plan today (the stats page and billing show it against the limits).
import { z } from 'zod'
import { PLAN_NAMES, planOf } from '../../shared/plans.js'
import { statsdRefusedToday } from '../../shared/ingest/protocols/statsd-intake.js'
import { accountOf } from '../context.js'
import type { Routes } from '../route.js'

const Limit = z.object({ used: z.number().int(), limit: z.number().int() })
const UsageJson = z
  .object({
    plan: z.enum(PLAN_NAMES),
    stats: Limit,
    points_today: Limit.describe("Points counted against today's allowance (resets 00:00 UTC)"),
    alerts: Limit,
    retention_days: z.number().int(),
    anomaly_detection: z.boolean(),
    statsd_refused_today: z
      .number()
      .int()
      .describe(
        "StatsD packets with this account's key refused today (UTC): a bad line, a quota or the rate limit. UDP has no answer, so they are counted here.",
      ),
  })
  .meta({ id: 'Usage' })

export function usageRoutes(routes: Routes): void {
  routes.add(
    {
      method: 'get',
      path: '/api/v1/usage',
      tag: 'account',
      summary: "The account's plan, its limits and what is used of them today",
      auth: ['bearer', 'session'],
      rateLimited: true,
      responses: { 200: { description: 'Usage against the plan', schema: UsageJson } },
      errors: [429],
    },
    async (ctx) => {
      const account = accountOf(ctx)
      const plan = planOf(account.plan)
      const { sql, limits } = ctx.deps
      const [[counts], points, statsdRefused] = await Promise.all([
        sql<{ stats: number; alerts: number }[]>`
        select (select count(*)::int from stats s where s.account_id = ${account.id}
          and (s.parent_id is not null or not exists (select 1 from stats c where c.parent_id = s.id))) as stats,
               (select count(*)::int from alerts where account_id = ${account.id}) as alerts`,
        limits.pointsUsedToday(account.id),
        statsdRefusedToday(ctx.deps.redis, ctx.deps.config, account.id),
      ])
      ctx.body = {
        plan: plan.name,
        stats: { used: counts.stats, limit: plan.trackedStats },
        points_today: { used: Math.min(points, plan.pointsPerDay), limit: plan.pointsPerDay },
        alerts: { used: counts.alerts, limit: plan.alerts },
        retention_days: plan.retentionDays,
        anomaly_detection: plan.anomalyDetection,
        statsd_refused_today: statsdRefused,
      }
    },
  )
}
