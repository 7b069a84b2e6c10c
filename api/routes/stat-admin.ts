// Describing, deleting and sharing a stat (docs/decisions.md §I-3.1, §I-4.3).
import { notFound } from '../../shared/errors.js'
import { assertPrintable } from '../../shared/ingest/text.js'
import { publishStatDeleted } from '../../shared/stats/directory.js'
import { statJson } from '../../shared/stats/json.js'
import { deleteStat } from '../../shared/delete-stat.js'
import { pointExtent, describeStat } from '../../shared/stats/repo.js'
import { PatchedStat, PatchStatBody, ShareJson, ShareState, StatExtent } from '../../shared/stats/schema.js'
import { sensitivityOf, setSensitivity } from '../../shared/anomalies/sweep.js'
import { createShare, revokeShare, shareSince } from '../../shared/stats/shares.js'
import { baseUrl, type AuthKind } from '../context.js'
import { statFromParam } from '../stat-param.js'
import type { Routes } from '../route.js'

export function statAdminRoutes(routes: Routes): void {
  const common = { tag: 'stats', auth: ['bearer', 'session'] as AuthKind[], rateLimited: true, errors: [403, 404, 429] }
  routes
    .add(
      {
        ...common,
        method: 'patch',
        path: '/api/v1/stats/:name',
        summary: "Set (or clear with null) the stat's description and unit, whether higher is better, and its anomaly sensitivity",
        body: PatchStatBody,
        responses: { 200: { description: 'The updated stat', schema: PatchedStat } },
      },
      async (ctx, { params, body }) => {
        assertPrintable(body.description, 'body.description')
        assertPrintable(body.unit, 'body.unit')
        const stat = await statFromParam(ctx, params.name)
        const updated = await describeStat(ctx.deps.sql, stat.accountId, stat.name, {
          description: body.description,
          unit: body.unit,
          higherIs: body.higher_is,
        })
        if (!updated) throw notFound('stat', 'stat_not_found')
        if (body.anomaly_sensitivity) await setSensitivity(ctx.deps.sql, stat.id, body.anomaly_sensitivity, new Date())
        ctx.body = { stat: { ...statJson(updated), anomaly_sensitivity: await sensitivityOf(ctx.deps.sql, stat.id) } }
      },
    )
    .add(
      {
        ...common,
        method: 'delete',
        path: '/api/v1/stats/:name',
        summary: 'Delete the stat and all its points, irreversibly (a later write re-creates it)',
        responses: { 204: { description: 'Deleted' } },
      },
      async (ctx, { params }) => {
        const stat = await statFromParam(ctx, params.name)
        await deleteStat(ctx.deps.sql, stat.accountId, stat.name)
        ctx.deps.directory.evict(stat.accountId, stat.name)
        await publishStatDeleted(ctx.deps.redis, ctx.deps.config, stat.accountId, stat.name).catch((err) =>
          ctx.deps.log.warn('could not announce a stat delete; other processes forget it within seconds', { error: err }),
        )
        ctx.status = 204
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/stats/:name/extent',
        summary: 'How many points the stat holds, and its oldest and newest (what a delete would remove)',
        responses: { 200: { description: 'The count and the oldest and newest point times', schema: StatExtent } },
      },
      async (ctx, { params }) => {
        const stat = await statFromParam(ctx, params.name)
        const e = await pointExtent(ctx.deps.sql, stat.id)
        ctx.body = { points: e.points, oldest: e.oldest?.toISOString() ?? null, newest: e.newest?.toISOString() ?? null }
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/stats/:name/share',
        summary: 'Whether the stat is shared, and since when (the token is never shown again)',
        responses: { 200: { description: 'The share, or null', schema: ShareState } },
      },
      async (ctx, { params }) => {
        const stat = await statFromParam(ctx, params.name)
        const since = await shareSince(ctx.deps.sql, stat.id)
        ctx.body = { share: since ? { stat_id: stat.id, created_at: since.toISOString() } : null }
      },
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/stats/:name/share',
        summary: "Create (or rotate) the stat's public share token for the embed routes",
        responses: { 201: { description: 'The token, shown once, and the embed URL', schema: ShareJson } },
      },
      async (ctx, { params }) => {
        const stat = await statFromParam(ctx, params.name)
        const { token, createdAt } = await createShare(ctx.deps.sql, stat.id)
        ctx.status = 201
        ctx.body = {
          share: {
            token,
            stat_id: stat.id,
            embed_url: `${baseUrl(ctx)}/embed/${stat.id}?token=${token}`,
            created_at: createdAt.toISOString(),
          },
        }
      },
    )
    .add(
      {
        ...common,
        method: 'delete',
        path: '/api/v1/stats/:name/share',
        summary: "Revoke the stat's share token (stops working at once)",
        responses: { 204: { description: 'Revoked' } },
      },
      async (ctx, { params }) => {
        const stat = await statFromParam(ctx, params.name)
        if (!(await revokeShare(ctx.deps.sql, stat.id))) throw notFound('share token', 'share_not_found')
        ctx.status = 204
      },
    )
}
