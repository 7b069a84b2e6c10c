// Reading stats back (docs/decisions.md §I-4.3, §6).
import { planOf } from '../../shared/plans.js'
import { clampToRetention, resolveWindow, windowJson } from '../../shared/stats/ranges.js'
import { parsePercentiles, readPercentiles, withPercentiles } from '../../shared/stats/percentiles.js'
import { readBuckets } from '../../shared/stats/read.js'
import { statJson } from '../../shared/stats/json.js'
import { listStats } from '../../shared/stats/repo.js'
import { StatDetail, StatDetailQuery, StatList } from '../../shared/stats/schema.js'
import { accountOf } from '../context.js'
import type { Routes } from '../route.js'
import { statFromParam } from '../stat-param.js'

export function statRoutes(routes: Routes): void {
  routes
    .add(
      {
        method: 'get',
        path: '/api/v1/stats',
        tag: 'stats',
        summary: "The account's stats",
        auth: ['bearer', 'session'],
        rateLimited: true,
        responses: { 200: { description: 'Stats by name', schema: StatList } },
        errors: [429],
      },
      async (ctx) => {
        ctx.body = { stats: (await listStats(ctx.deps.sql, accountOf(ctx).id)).map(statJson) }
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/stats/:name',
        tag: 'stats',
        summary: 'One stat with its points bucketed for a range or a from/to window',
        auth: ['bearer', 'session'],
        rateLimited: true,
        query: StatDetailQuery,
        responses: { 200: { description: 'The stat and its buckets (empty buckets omitted)', schema: StatDetail } },
        errors: [404, 429],
      },
      async (ctx, { params, query }) => {
        const stat = await statFromParam(ctx, params.name)
        const now = new Date()
        const w = clampToRetention(resolveWindow(query, now), planOf(accountOf(ctx).plan).retentionDays, now)
        const ps = query.percentiles === undefined ? [] : parsePercentiles(query.percentiles, stat.kind)
        const [points, values] = await ctx.deps.reads.run((sql) =>
          Promise.all([readBuckets(sql, stat.id, stat.kind, w), ps.length ? readPercentiles(sql, stat.id, w, ps) : new Map()]),
        )
        ctx.body = { stat: statJson(stat), range: windowJson(w), points: ps.length ? withPercentiles(points, ps, values) : points }
      },
    )
}
