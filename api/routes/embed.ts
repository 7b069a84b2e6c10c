// Public read access to one stat through its share token: JSON for scripts
// and an HTML chart for iframes. Unknown stat, missing, wrong or revoked token
// all answer the same 404, so the answer does not tell which.
import { z } from 'zod'
import { invalid, notFound } from '../../shared/errors.js'
import { resolveWindow, windowJson } from '../../shared/stats/ranges.js'
import { readBuckets } from '../../shared/stats/read.js'
import { findStatById, type Stat } from '../../shared/stats/repo.js'
import { EmbedJson, EmbedQuery } from '../../shared/stats/schema.js'
import { seriesIdsOf } from '../../shared/stats/series.js'
import { shareAllows } from '../../shared/stats/shares.js'
import { EMBED_CSP, embedPage } from '../embed-page.js'
import type { Ctx } from '../context.js'
import type { Routes } from '../route.js'

export const EMBED_RANGES = ['1h', '6h', '24h', '7d', '30d'] as const

async function sharedStat(ctx: Ctx, statId: string, query: z.infer<typeof EmbedQuery>) {
  if (!z.uuid().safeParse(statId).success) throw invalid('invalid_stat_id', 'statId must be a UUID')
  const w = resolveWindow({ range: query.range }, new Date(), EMBED_RANGES)
  const stat = await findStatById(ctx.deps.sql, statId)
  if (!stat || !(await shareAllows(ctx.deps.sql, stat.id, query.token ?? ''))) throw notFound('shared stat', 'share_not_found')
  // The stat as a whole: all its series read as one (docs/decisions.md §24).
  const points = await ctx.deps.reads.run(async (sql) => readBuckets(sql, (await seriesIdsOf(sql, [stat])).get(stat.id)!, stat.kind, w))
  return { stat, w, points }
}

const publicStat = (s: Stat) => ({ id: s.id, name: s.name, kind: s.kind, description: s.description })

export function embedRoutes(routes: Routes): void {
  routes.add(
    {
      method: 'get',
      path: '/api/v1/embed/:statId',
      tag: 'embed',
      summary: "A shared stat's chart data (share token in ?token=)",
      query: EmbedQuery,
      responses: { 200: { description: 'The stat and its buckets', schema: EmbedJson } },
      errors: [404],
    },
    async (ctx, { params, query }) => {
      const { stat, w, points } = await sharedStat(ctx, params.statId, query)
      ctx.body = { stat: publicStat(stat), range: windowJson(w), points }
    },
  )
  routes.add(
    {
      method: 'get',
      path: '/embed/:statId',
      operationId: 'getEmbedPageByStatId',
      tag: 'embed',
      summary: "A shared stat's chart as an HTML page for an iframe",
      query: EmbedQuery,
      responses: { 200: { description: 'text/html chart' } },
      errors: [404],
    },
    async (ctx, { params, query }) => {
      const { stat, w, points } = await sharedStat(ctx, params.statId, query)
      ctx.set('Content-Security-Policy', EMBED_CSP)
      ctx.set('Referrer-Policy', 'no-referrer') // the token is in this page's URL
      ctx.type = 'html'
      ctx.body = embedPage(stat, w, points)
    },
  )
}
