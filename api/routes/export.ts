// Export of raw observations as CSV or JSON (docs/decisions.md §I-4.5,
// §7), streamed with the applied window in headers and body.
import { Readable } from 'node:stream'
import { exportCsv, exportJson, hasOlderPoints } from '../../shared/export/stream.js'
import { resolveExportWindow } from '../../shared/export/window.js'
import { planOf } from '../../shared/plans.js'
import { listStats, withSeries, type Stat } from '../../shared/stats/repo.js'
import { ExportQuery } from '../../shared/stats/schema.js'
import { accountOf, type AuthKind, type Ctx } from '../context.js'
import type { Routes } from '../route.js'
import { statFromParam } from '../stat-param.js'
import type { z } from 'zod'

async function sendExport(ctx: Ctx, query: z.infer<typeof ExportQuery>, statName: string | undefined) {
  const account = accountOf(ctx)
  const w = resolveExportWindow(query, planOf(account.plan), new Date())
  let stats: Stat[]
  if (statName !== undefined) {
    stats = [await statFromParam(ctx, statName)]
  } else {
    stats = await listStats(ctx.deps.sql, account.id)
  }
  // Each stat followed by its tagged series (docs/decisions.md §24).
  stats = await withSeries(ctx.deps.sql, stats)
  if (w.needsOlderCheck) w.clamped = await ctx.deps.reads.run((sql) => hasOlderPoints(sql, stats, w.from))
  ctx.set('X-Service-Export-Requested-Range', w.requested)
  ctx.set('X-Service-Export-From', w.from.toISOString())
  ctx.set('X-Service-Export-To', w.to.toISOString())
  ctx.set('X-Service-Export-Retention-Days', String(w.retentionDays))
  ctx.set('X-Service-Export-Range-Clamped', String(w.clamped))
  const csv = query.format === 'csv'
  ctx.type = csv ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8'
  ctx.set('Content-Disposition', exportDisposition(statName, w.from, w.to, csv ? 'csv' : 'json'))
  // A page that fails after the 200 and the first bytes went out (a lost connection, a timeout)
  // destroys the response (Koa pipes the body with stream.pipeline): the chunked body never gets its
  // final chunk, so the client sees a broken transfer, never a shorter file that ends cleanly. Each page is read
  // through the read pool, so a page that fails on the replica is read again on the primary.
  ctx.body = Readable.from((csv ? exportCsv : exportJson)(ctx.deps.reads, stats, w))
}

/**
 * The download's name after what it holds (every file was export.csv): the stat (or
 * "all-stats") and the applied window in UTC, "checkout.latency_2026-11-01T0000Z_2026-11-08T0000Z.csv". An ASCII
 * name for every client, and the exact one (RFC 6266 filename*) for those that read it: stat names may hold spaces and &.
 */
export function exportDisposition(statName: string | undefined, from: Date, to: Date, ext: 'csv' | 'json'): string {
  const at = (d: Date) => `${d.toISOString().slice(0, 16).replace(':', '')}Z`
  const name = `${statName ?? 'all-stats'}_${at(from)}_${at(to)}.${ext}`
  const ascii = name.replace(/[^A-Za-z0-9._-]/g, '_')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

export function exportRoutes(routes: Routes): void {
  const common = {
    tag: 'export',
    auth: ['bearer', 'session'] as AuthKind[],
    rateLimited: true,
    query: ExportQuery,
    errors: [404, 429],
    responses: {
      200: {
        description:
          'Raw observations, ordered by stat name then time, streamed. CSV: header stat,kind,timestamp,iso_time,value,tags (k=v;k=v), rows, then a final "# requested_range=… applied_from=… applied_to=…" line.',
      },
    },
  }
  routes
    .add({ ...common, method: 'get', path: '/api/v1/export', summary: 'Export every stat (or ?stat=) as CSV or JSON' }, (ctx, { query }) =>
      sendExport(ctx, query, query.stat),
    )
    .add(
      { ...common, method: 'get', path: '/api/v1/stats/:name/export', summary: 'Export one stat as CSV or JSON' },
      (ctx, { query, params }) => sendExport(ctx, query, params.name),
    )
}
