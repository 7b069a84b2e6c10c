// Correlations and threshold suggestions (docs/decisions.md §I-4.8, §12):
// Bearer or session reads, every query scoped to the caller's account.
import { correlations } from '../../shared/analytics/correlations.js'
import { CorrelationsQuery, CorrelationsResponse, ThresholdsQuery, ThresholdsResponse } from '../../shared/analytics/schema.js'
import { readMinutes, readPercentileMinutes, suggestThresholds } from '../../shared/analytics/thresholds.js'
import type { Aggregation } from '../../shared/alerts/schema.js'
import { invalid } from '../../shared/errors.js'
import { planOf } from '../../shared/plans.js'
import { RANGES, type RangeName } from '../../shared/stats/ranges.js'
import { accountOf, type AuthKind } from '../context.js'
import type { Routes } from '../route.js'
import { statFromParam } from '../stat-param.js'

export function analyticsRoutes(routes: Routes): void {
  const common = { tag: 'analytics', auth: ['bearer', 'session'] as AuthKind[], rateLimited: true, errors: [404, 429] }
  routes
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/correlations',
        query: CorrelationsQuery,
        summary:
          "Which of the account's stats move with this one: hourly buckets, ranked by the strength of the correlation, with the best lag and the hours each rests on",
        responses: { 200: { description: 'Ranked coefficients, the stats left out and why', schema: CorrelationsResponse } },
      },
      async (ctx, { query }) => {
        const account = accountOf(ctx)
        const stat = await statFromParam(ctx, query.stat)
        ctx.body = await ctx.deps.reads.run((sql) => correlations(sql, account.id, planOf(account.plan), stat, query, new Date()))
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/thresholds/suggest',
        query: ThresholdsQuery,
        summary:
          "Candidate alert thresholds from the stat's own per-minute history, each back-tested through the live alert evaluation: fires, minutes in breach, fires the cooldown would swallow",
        responses: { 200: { description: 'The distribution, the back-tested thresholds and warnings', schema: ThresholdsResponse } },
      },
      async (ctx, { query }) => {
        const account = accountOf(ctx)
        const stat = await statFromParam(ctx, query.stat)
        const now = new Date()
        const lookbackDays = RANGES[query.lookback as RangeName].seconds / 86_400
        const retentionDays = planOf(account.plan).retentionDays
        const days = Math.min(lookbackDays, retentionDays)
        const aggregation = query.aggregation as Aggregation
        if (aggregation !== 'avg' && stat.kind === 'counter') {
          throw invalid(
            'percentile_on_counter',
            `aggregation ${aggregation}: "${stat.name}" is a counter, and only gauges have percentiles (a counter's minute is a sum): use aggregation avg`,
          )
        }
        const from = new Date(now.getTime() - days * 86_400_000)
        const series = await ctx.deps.reads.run((sql) =>
          aggregation === 'avg'
            ? readMinutes(sql, stat, from, now)
            : readPercentileMinutes(sql, stat, from, now, query.window_minutes, aggregation),
        )
        ctx.body = suggestThresholds({
          stat,
          series,
          condition: query.condition_type as 'above' | 'below',
          cooldownMinutes: query.cooldown_minutes,
          threshold: query.threshold,
          lookbackDays,
          clampedToDays: lookbackDays > retentionDays ? retentionDays : null,
          aggregation,
          windowMinutes: query.window_minutes,
        })
      },
    )
}
