// The dashboard API (docs/decisions.md §I-4.4): session only.
import { z } from 'zod'
import { dashboard, dashboardWindows } from '../../shared/stats/dashboard.js'
import { planOf } from '../../shared/plans.js'
import { clampToRetention, resolveWindow, windowJson, RANGE_NAMES } from '../../shared/stats/ranges.js'
import { BucketJson, RangeJson } from '../../shared/stats/schema.js'
import { accountOf } from '../context.js'
import type { Routes } from '../route.js'

const DashboardQuery = z.object({
  range: z
    .string()
    .optional()
    .describe(`One of ${RANGE_NAMES.join(', ')} (default 24h)`),
})
const DashboardJson = z
  .object({
    range: RangeJson,
    stats: z.array(
      z.object({
        id: z.uuid(),
        name: z.string(),
        kind: z.enum(['counter', 'gauge']),
        description: z.string().nullable(),
        last_value: z.number().nullable(),
        last_point_at: z.iso.datetime().nullable(),
        summary: z
          .object({
            total: z.number().optional(),
            average: z.number().nullable().optional(),
            min: z.number().nullable().optional(),
            max: z.number().nullable().optional(),
            n: z.number().int(),
          })
          .describe('Counter: total and n over the range. Gauge: average, min, max and n.'),
        points: z.array(BucketJson),
      }),
    ),
  })
  .meta({ id: 'Dashboard' })

export function dashboardRoutes(routes: Routes): void {
  routes.add(
    {
      method: 'get',
      path: '/api/v1/dashboard',
      tag: 'stats',
      summary: 'Every stat of the account summarised for a range (dashboard session only)',
      auth: ['session'],
      rateLimited: true,
      query: DashboardQuery,
      responses: { 200: { description: 'Stats by name', schema: DashboardJson } },
      errors: [403, 429],
    },
    async (ctx, { query }) => {
      const now = new Date()
      const w = clampToRetention(resolveWindow({ range: query.range }, now), planOf(accountOf(ctx).plan).retentionDays, now)
      ctx.body = {
        range: windowJson(dashboardWindows(w).answer),
        stats: await ctx.deps.reads.run((sql) => dashboard(sql, accountOf(ctx).id, w)),
      }
    },
  )
}
