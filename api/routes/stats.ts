// Reading stats back (docs/decisions.md §I-4.3, §6).
import { planOf } from '../../shared/plans.js'
import { clampToRetention, resolveWindow, windowJson, type Window } from '../../shared/stats/ranges.js'
import { parsePercentiles, readPercentiles, withPercentiles } from '../../shared/stats/percentiles.js'
import { readStatChart } from '../../shared/stats/chart.js'
import { readBuckets, type Bucket } from '../../shared/stats/read.js'
import { statJson } from '../../shared/stats/json.js'
import { listStats } from '../../shared/stats/repo.js'
import { StatDetail, StatDetailQuery, StatList, StatTags } from '../../shared/stats/schema.js'
import { matchingSeries, readGrouped, tagSummary } from '../../shared/stats/series.js'
import { parseFilter } from '../../shared/ingest/tags.js'
import { invalid } from '../../shared/errors.js'
import type { Parsed } from '../../shared/ingest/parsed.js'
import { accountOf } from '../context.js'
import type { Routes } from '../route.js'
import { noSuchStat, statFromParam } from '../stat-param.js'

function unwrapParsed<T>(p: Parsed<T>): T {
  if (p.ok) return p.value
  throw invalid(p.code, p.message)
}

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
        const now = new Date()
        let w: Window
        try {
          w = clampToRetention(resolveWindow(query, now), planOf(accountOf(ctx).plan).retentionDays, now)
        } catch (err) {
          await statFromParam(ctx, params.name) // an unknown stat is a 404 whatever else is wrong
          throw err
        }
        const whole = query.percentiles === undefined && query.filter === undefined && query.group_by === undefined
        ctx.body = await ctx.deps.reads.run(async (sql) => {
          // The stat, its series and their buckets in one statement, where the read is on the primary; on a replica,
          // which may be behind (a stat deleted, described), the stat is looked up on the primary first.
          if (whole && sql === ctx.deps.sql) {
            const chart = await readStatChart(sql, accountOf(ctx).id, params.name, w)
            if (!chart) throw noSuchStat()
            return { stat: statJson(chart.stat), range: windowJson(w), points: chart.points }
          }
          const stat = await statFromParam(ctx, params.name)
          const ps = query.percentiles === undefined ? [] : parsePercentiles(query.percentiles, stat.kind)
          const filter = unwrapParsed(parseFilter(query.filter))
          // Without tag parameters: the stat as a whole, all its series read as one (docs/decisions.md §24).
          const series = await matchingSeries(sql, stat, filter)
          const ids = series.map((s) => s.id)
          const percentiles = (ids: string[]) =>
            ps.length && ids.length ? readPercentiles(sql, ids, w, ps) : Promise.resolve(new Map<number, number[]>())
          const withPs = <B extends Bucket>(points: B[], values: Map<number, number[]>) =>
            ps.length ? withPercentiles(points, ps, values) : points
          const answer = { stat: statJson(stat), range: windowJson(w) }
          if (query.group_by === undefined) {
            const [points, values] = await Promise.all([ids.length ? readBuckets(sql, ids, stat.kind, w) : [], percentiles(ids)])
            return { ...answer, points: withPs(points, values) }
          }
          // The whole and its groups from one read of the series' rollups.
          const read = await readGrouped(sql, stat.kind, series, query.group_by, w)
          const [values, groupValues] = await Promise.all([percentiles(ids), Promise.all(read.groups.map((g) => percentiles(g.ids)))])
          return {
            ...answer,
            points: withPs(read.points, values),
            groups: read.groups.map((g, i) => ({
              tags: g.tags,
              ...(g.other ? { other: true } : {}),
              points: withPs(g.points, groupValues[i]),
            })),
          }
        })
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/stats/:name/tags',
        tag: 'stats',
        summary: "A stat's tag keys with their values and how many series hold each",
        auth: ['bearer', 'session'],
        rateLimited: true,
        responses: { 200: { description: 'Tag keys by name, values by name', schema: StatTags } },
        errors: [404, 429],
      },
      async (ctx, { params }) => {
        const stat = await statFromParam(ctx, params.name)
        ctx.body = { tags: await ctx.deps.reads.run((sql) => tagSummary(sql, stat)) }
      },
    )
}
