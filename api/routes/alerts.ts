// Alerts (docs/decisions.md §I-2.4, §I-3.2, §I-4.6; §8) and the e-mail opt-in link.
import { z } from 'zod'
import { invalid, notFound } from '../../shared/errors.js'
import { confirmEmail } from '../../shared/alerts/mail.js'
import { alertGroups, alertJson, deliveryJson, listAlerts, listDeliveries } from '../../shared/alerts/repo.js'
import {
  AlertEventList,
  AlertList,
  AlertResponse,
  CreateAlertBody,
  CreatedAlert,
  DeliveryList,
  TestDelivery,
  UpdateAlertBody,
} from '../../shared/alerts/schema.js'
import { createAlert, removeAlert } from '../../shared/alerts/create-delete.js'
import { sendTest, updateAlert } from '../../shared/alerts/patch-and-test.js'
import { eventJson, listEvents } from '../../shared/alerts/history.js'
import type { Sql } from '../../shared/db.js'
import { closestStatName } from '../../shared/stats/closest.js'
import { findStat } from '../../shared/stats/repo.js'
import { accountOf, baseUrl, type AuthKind } from '../context.js'
import type { Routes } from '../route.js'
import { messagePage } from '../web/pages.js'

/**
 * An alert may name a stat before its first point (so it is ready when data arrives), but a typo
 * would then wait silently forever: say so, and name the closest existing stat.
 */
async function statWarnings(sql: Sql, accountId: string, statName: string): Promise<{ warnings?: string[] }> {
  if (await findStat(sql, accountId, statName)) return {}
  const closest = await closestStatName(sql, accountId, statName)
  return {
    warnings: [
      `no stat named "${statName}" exists yet; the alert will evaluate once points arrive${closest ? ` (did you mean "${closest}"?)` : ''}`,
    ],
  }
}

function alertId(params: Record<string, string>): string {
  if (!z.uuid().safeParse(params.id).success) throw invalid('invalid_id', 'alert id must be a UUID')
  return params.id
}

export function alertRoutes(routes: Routes): void {
  const common = { tag: 'alerts', auth: ['bearer', 'session'] as AuthKind[], rateLimited: true, errors: [403, 404, 429] }
  routes
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/alerts',
        summary: 'Create an alert on a stat (by name)',
        body: CreateAlertBody,
        responses: {
          201: { description: 'The alert, and the secret that signs its webhook deliveries (shown once)', schema: CreatedAlert },
        },
      },
      async (ctx, { body }) => {
        const account = accountOf(ctx)
        const alert = await createAlert(ctx.deps, account, body, baseUrl(ctx))
        ctx.status = 201
        ctx.body = {
          alert: alertJson(alert),
          signing_secret: alert.signing_secret,
          ...(await statWarnings(ctx.deps.sql, account.id, body.stat_name)),
        }
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/alerts',
        summary: "The account's alerts, with their state and last delivery error",
        responses: { 200: { description: 'Alerts', schema: AlertList } },
      },
      async (ctx) => {
        ctx.body = { alerts: (await listAlerts(ctx.deps.sql, accountOf(ctx).id)).map(alertJson) }
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/alerts/:id/deliveries',
        summary: "The alert's 20 most recent deliveries (fired or resolved), newest first",
        responses: { 200: { description: 'Deliveries', schema: DeliveryList } },
      },
      async (ctx, { params }) => {
        if (!z.uuid().safeParse(params.id).success) throw invalid('invalid_id', 'alert id must be a UUID')
        const rows = await listDeliveries(ctx.deps.sql, accountOf(ctx).id, params.id, 20)
        if (!rows) throw notFound('alert', 'alert_not_found')
        ctx.body = { deliveries: rows.map(deliveryJson) }
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/alerts/:id',
        summary: 'One alert, with its state, mute and on_no_data',
        errors: [404, 429],
        responses: { 200: { description: 'The alert', schema: AlertResponse } },
      },
      async (ctx, { params }) => {
        const alert = (await listAlerts(ctx.deps.sql, accountOf(ctx).id)).find((a) => a.id === alertId(params))
        if (!alert) throw notFound('alert', 'alert_not_found')
        ctx.body = { alert: { ...alertJson(alert), ...(alert.group_by ? { groups: await alertGroups(ctx.deps.sql, alert.id) } : {}) } }
      },
    )
    .add(
      {
        ...common,
        method: 'patch',
        path: '/api/v1/alerts/:id',
        summary: 'Change an alert: threshold, window, cooldown, channel target, mute, on_no_data',
        body: UpdateAlertBody,
        errors: [404, 409, 429],
        responses: { 200: { description: 'The alert as changed', schema: AlertResponse } },
      },
      async (ctx, { params, body }) => {
        const id = alertId(params)
        ctx.body = { alert: alertJson(await updateAlert(ctx.deps, accountOf(ctx), id, body, baseUrl(ctx))) }
      },
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/alerts/:id/test',
        summary: 'Send one test delivery (event "test") through the alert\'s channel, signed like any delivery',
        errors: [404, 409, 429, 503],
        responses: { 202: { description: "Queued; its attempts show in the alert's events", schema: TestDelivery } },
      },
      async (ctx, { params }) => {
        const deliveryId = await sendTest(ctx.deps, accountOf(ctx).id, alertId(params))
        ctx.status = 202
        ctx.body = { delivery_id: deliveryId }
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/alerts/:id/events',
        summary: "The alert's history, newest first: fired, resolved, suppressed, muted and test, each with every delivery attempt",
        query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
        responses: { 200: { description: 'Events', schema: AlertEventList } },
      },
      async (ctx, { params, query }) => {
        const rows = await listEvents(ctx.deps.sql, accountOf(ctx).id, alertId(params), query.limit)
        if (!rows) throw notFound('alert', 'alert_not_found')
        ctx.body = { events: rows.map(eventJson) }
      },
    )
    .add(
      {
        ...common,
        method: 'delete',
        path: '/api/v1/alerts/:id',
        summary: 'Delete an alert; its queued deliveries are dropped and no resolve is sent',
        responses: { 204: { description: 'Deleted' } },
      },
      async (ctx, { params }) => {
        if (!z.uuid().safeParse(params.id).success) throw invalid('invalid_id', 'alert id must be a UUID')
        if (!(await removeAlert(ctx.deps, accountOf(ctx).id, params.id))) throw notFound('alert', 'alert_not_found')
        ctx.status = 204
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/email/confirm',
        tag: 'alerts',
        summary: 'Confirm an address for alert e-mails (the link in the confirmation mail)',
        query: z.object({ token: z.string().max(200) }),
        responses: { 200: { description: 'Confirmed (an HTML page with a link back to the app); pending e-mail alerts for it are armed' } },
        errors: [404],
      },
      async (ctx, { query }) => {
        if (!(await confirmEmail(ctx.deps.sql, query.token))) throw notFound('confirmation', 'confirmation_not_found')
        // A person arrives here from a mail: a page like the app's others, with the way on to their alerts.
        await messagePage(
          ctx,
          'Address confirmed',
          '<h1>Address confirmed</h1><p>Alert e-mails will now be delivered to this address.</p>' +
            '<div class="actions"><a href="/alerts" class="button">Go to your alerts</a><a href="/" class="button secondary">Back to the app</a></div>',
        )
      },
    )
}
