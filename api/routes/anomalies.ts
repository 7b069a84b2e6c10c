// Anomaly detection (docs/decisions.md §I-4.7, §I-4.8; §11): the incident list, the back-test and the diagnostics.
import { backtest, diagnostics, listAnomalies } from '../../shared/anomalies/service.js'
import { AnomaliesQuery, AnomalyList, Backtest, BacktestQuery, Diagnostics, DiagnosticsQuery } from '../../shared/anomalies/schema.js'
import { accountOf, type AuthKind, type Ctx } from '../context.js'
import type { Routes } from '../route.js'
import { statFromParam } from '../stat-param.js'

const statOrNull = (ctx: Ctx, name: string | undefined) => (name === undefined ? null : statFromParam(ctx, name))

export function anomalyRoutes(routes: Routes): void {
  const common = { tag: 'anomalies', auth: ['bearer', 'session'] as AuthKind[], rateLimited: true }
  routes
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/anomalies',
        summary:
          'Anomaly incidents (spikes, dips, level shifts in complete hourly buckets), newest first. On a plan without detection: an empty list and an omitted text.',
        query: AnomaliesQuery,
        responses: { 200: { description: 'Incidents that overlap the range', schema: AnomalyList } },
        errors: [404, 429],
      },
      async (ctx, { query }) => {
        const stat = (await statOrNull(ctx, query.stat)) ?? undefined
        ctx.body = await listAnomalies(ctx.deps.sql, accountOf(ctx), { ...query, stat }, new Date())
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/anomalies/backtest',
        summary:
          "Replays the detector over a stat's hourly history as if a sweep had run after every complete hour: the normal band, the flagged hours and the incidents. 403 on a plan without detection.",
        query: BacktestQuery,
        responses: { 200: { description: 'Hour by hour verdicts and incidents', schema: Backtest } },
        errors: [403, 404, 429],
      },
      async (ctx, { query }) => {
        const stat = await statFromParam(ctx, query.stat)
        ctx.body = await ctx.deps.reads.run((sql) => backtest(sql, accountOf(ctx), stat, query.range, new Date(), query.sensitivity))
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/anomalies/diagnostics',
        summary:
          "Per stat: whether the detector has scored it, why not, and whether it could fire; with the evaluator's schedule and this account's counters",
        query: DiagnosticsQuery,
        responses: { 200: { description: 'Diagnostics (docs/decisions.md §I-4.7)', schema: Diagnostics } },
        errors: [404, 429],
      },
      async (ctx, { query }) => {
        const { config, queues, sql } = ctx.deps
        const scheduler = await queues.get('anomalies').getJobScheduler('anomaly-sweep')
        const ev = {
          scheduler: scheduler?.every ? { everyMs: Number(scheduler.every) } : null,
          intervalSeconds: config.anomalySweepIntervalSeconds,
          staleAfterSeconds: config.anomalyStaleAfterSeconds,
        }
        ctx.body = await diagnostics(sql, accountOf(ctx), await statOrNull(ctx, query.stat), query.limit ?? 25, ev, new Date())
      },
    )
}
