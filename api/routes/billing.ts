// Billing (docs/decisions.md §I-4.6, §I-5.3; §9, §14): checkout and portal on the
// dashboard session, the return from them, and the provider's signed events.
import { readRaw } from '../middleware/legacy-body.js'
import { findBillingByAccount } from '../../shared/billing/repo.js'
import { openPortal, startCheckout } from '../../shared/billing/checkout.js'
import { BillingState, CheckoutBody, CheckoutSession, ReturnQuery, WebhookReceipt } from '../../shared/billing/schema.js'
import { LIVE, syncOnReturn } from '../../shared/billing/sync.js'
import { receiveEvent } from '../../shared/billing/webhook.js'
import type { PaidPlan } from '../../shared/billing/provider.js'
import { accountOf, baseUrl } from '../context.js'
import type { Routes } from '../route.js'

export function billingRoutes(routes: Routes): void {
  routes
    .add(
      {
        method: 'post',
        path: '/api/payments/checkout',
        role: 'owner',
        tag: 'billing',
        auth: ['session'],
        body: CheckoutBody,
        summary: 'Start a hosted checkout for a paid plan; send the browser to the returned url',
        responses: { 200: { description: 'The hosted checkout session', schema: CheckoutSession } },
        errors: [403, 409, 503],
      },
      async (ctx, { body }) => {
        ctx.body = await startCheckout(ctx.deps, accountOf(ctx), body.plan as PaidPlan, baseUrl(ctx))
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/billing/portal',
        role: 'owner',
        tag: 'billing',
        auth: ['session'],
        summary: "Redirect to the provider's billing portal (change plan, cancel, invoices)",
        responses: { 302: { description: 'Location: the portal session' } },
        errors: [403, 503],
      },
      async (ctx) => {
        ctx.redirect(await openPortal(ctx.deps, accountOf(ctx), baseUrl(ctx)))
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/billing',
        role: 'owner',
        tag: 'billing',
        auth: ['session'],
        summary: "The account's plan and the subscription it comes from, as of the last sync",
        responses: { 200: { description: 'Billing state', schema: BillingState } },
        errors: [403],
      },
      async (ctx) => {
        const account = accountOf(ctx)
        const b = await findBillingByAccount(ctx.deps.sql, account.id)
        ctx.body = {
          plan: account.plan,
          subscription: b?.subscription_id
            ? {
                id: b.subscription_id,
                status: b.subscription_status,
                past_due: b.past_due,
                current_period_end: b.current_period_end?.toISOString() ?? null,
                in_force: LIVE.has(b.subscription_status ?? ''),
              }
            : null,
          synced_at: b?.synced_at?.toISOString() ?? null,
        }
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/billing/return',
        role: 'owner',
        tag: 'billing',
        auth: ['session'],
        query: ReturnQuery,
        summary: 'Where checkout and the portal send the browser back: syncs the plan at once, then redirects to /',
        responses: { 303: { description: 'Location: / with billing=updated or billing=cancelled' } },
        errors: [403],
      },
      async (ctx, { query }) => {
        const account = accountOf(ctx)
        if (!query.cancelled) await syncOnReturn(ctx.deps, account.id, new Date())
        ctx.status = 303
        ctx.redirect(`/?billing=${query.cancelled ? 'cancelled' : 'updated'}`)
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/payments/webhook',
        tag: 'billing',
        summary:
          "The payment provider's signed events (register this URL with the provider). Verified on the raw body; each event id is processed once",
        responses: { 200: { description: 'Received (also for a redelivered event, which does nothing)', schema: WebhookReceipt } },
        errors: [400, 413, 503],
      },
      async (ctx) => {
        const { duplicate } = await receiveEvent(ctx.deps, await readRaw(ctx), ctx.get('stripe-signature') || undefined)
        ctx.body = { received: true, duplicate }
      },
    )
}
