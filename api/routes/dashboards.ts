// Dashboards of cards (docs/decisions.md §17): Bearer or session, every query scoped to the caller's account.
import { dashboardData } from '../../shared/dashboards/data.js'
import {
  createDashboard,
  dashboardJson,
  deleteDashboard,
  getDashboard,
  listDashboards,
  patchDashboard,
} from '../../shared/dashboards/repo.js'
import {
  CreateDashboardBody,
  DashboardData,
  DashboardDataQuery,
  DashboardList,
  DashboardOne,
  PatchDashboardBody,
} from '../../shared/dashboards/schema.js'
import { assertPrintable } from '../../shared/ingest/text.js'
import { accountOf, type AuthKind } from '../context.js'
import type { Routes } from '../route.js'

/** Names and titles are shown on pages: no control or invisible characters (as a stat's description). */
function printable(body: { name?: string; cards?: Array<{ title?: string }> }): void {
  assertPrintable(body.name, 'body.name')
  body.cards?.forEach((c, i) => {
    assertPrintable(c.title, `body.cards.${i}.title`)
  })
}

export function dashboardsRoutes(routes: Routes): void {
  const common = { tag: 'dashboards', auth: ['bearer', 'session'] as AuthKind[], rateLimited: true, errors: [403, 404, 429] }
  routes
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/dashboards',
        summary: "The account's dashboards, oldest first",
        responses: { 200: { description: 'Dashboards with their cards', schema: DashboardList } },
      },
      async (ctx) => {
        ctx.body = { dashboards: (await listDashboards(ctx.deps.sql, accountOf(ctx).id)).map(dashboardJson) }
      },
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/dashboards',
        body: CreateDashboardBody,
        summary: "Create a dashboard: a name and cards of 1 to 5 of the account's stats (at most 50 cards)",
        responses: { 201: { description: 'The dashboard', schema: DashboardOne } },
      },
      async (ctx, { body }) => {
        printable(body)
        const d = await createDashboard(ctx.deps.sql, accountOf(ctx).id, body)
        ctx.status = 201
        ctx.body = { dashboard: dashboardJson(d) }
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/dashboards/:id',
        summary: 'One dashboard',
        responses: { 200: { description: 'The dashboard', schema: DashboardOne } },
      },
      async (ctx, { params }) => {
        ctx.body = { dashboard: dashboardJson(await getDashboard(ctx.deps.sql, accountOf(ctx).id, params.id)) }
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/dashboards/:id/data',
        query: DashboardDataQuery,
        summary: "Every card's window and its stats' buckets, in card order (what the dashboard page draws)",
        responses: { 200: { description: "The dashboard and its cards' series", schema: DashboardData } },
      },
      async (ctx, { params, query }) => {
        const account = accountOf(ctx)
        const d = await getDashboard(ctx.deps.sql, account.id, params.id)
        const cards = await ctx.deps.reads.run((sql) => dashboardData(sql, d, account.plan, query.range, new Date()))
        ctx.body = { dashboard: dashboardJson(d), cards }
      },
    )
    .add(
      {
        ...common,
        method: 'patch',
        path: '/api/v1/dashboards/:id',
        body: PatchDashboardBody,
        summary: 'Rename, set the range, and/or replace the cards (the whole list, in order; a kept card carries its id)',
        responses: { 200: { description: 'The updated dashboard', schema: DashboardOne } },
      },
      async (ctx, { params, body }) => {
        printable(body)
        ctx.body = { dashboard: dashboardJson(await patchDashboard(ctx.deps.sql, accountOf(ctx).id, params.id, body)) }
      },
    )
    .add(
      {
        ...common,
        method: 'delete',
        path: '/api/v1/dashboards/:id',
        summary: 'Delete a dashboard (its stats stay)',
        responses: { 204: { description: 'Deleted' } },
      },
      async (ctx, { params }) => {
        await deleteDashboard(ctx.deps.sql, accountOf(ctx).id, params.id)
        ctx.status = 204
      },
    )
}
