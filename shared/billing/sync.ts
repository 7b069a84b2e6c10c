// Derives an account's plan from its subscription as the provider holds it
// now, never from an event's payload: events arrive late, twice and out of
// order, and a re-fetch under a per-customer lock makes their order irrelevant.
import type Stripe from 'stripe'
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import type { Logger } from '../log.js'
import { planOfPrice, provider } from './provider.js'
import type { Queues } from '../queues.js'
import { applySync, findBillingByAccount, findBillingByCustomer, type SyncedState } from './repo.js'

/** Statuses in which the subscription's plan applies (past_due: kept while the provider retries the payment). */
export const LIVE = new Set(['active', 'trialing', 'past_due'])

/**
 * The plan the customer's subscriptions entitle it to: the newest live one's
 * plan (active, trialing, past due), else free (cancelled, unpaid, expired,
 * incomplete, paused, or none). A live subscription at a price no setting
 * names is an error, not a downgrade: the plan stays as it is and the job retries.
 */
export function derivePlan(config: Pick<Config, 'env' | 'stripe'>, subscriptions: Stripe.Subscription[]): SyncedState {
  const newest = [...subscriptions].sort((a, b) => b.created - a.created)
  const live = newest.find((s) => LIVE.has(s.status))
  const shown = live ?? newest[0]
  const item = shown?.items.data[0]
  const base = {
    subscriptionId: shown?.id ?? null,
    status: shown?.status ?? null,
    priceId: item?.price.id ?? null,
    currentPeriodEnd: item?.current_period_end ? new Date(item.current_period_end * 1000) : null,
  }
  if (!live) return { ...base, plan: 'free', pastDue: false }
  const plan = item ? planOfPrice(config, item.price.id) : undefined
  if (!plan) throw new Error(`subscription ${live.id} is at price ${item?.price.id ?? '(none)'}, which no STRIPE_PRICE_* setting names`)
  return { ...base, plan, pastDue: live.status === 'past_due' }
}

export interface SyncDeps {
  config: Config
  sql: Sql
  log: Logger
}

export type SyncResult = { account_id: string; plan: SyncedState['plan']; status: string | null } | { unknown_customer: string }

/**
 * Re-fetches the customer's subscriptions and applies the plan. Syncs of one
 * customer are serialised by a lock held across the fetch, so a sync that
 * fetched older state can never write after one that fetched newer state.
 */
export async function syncCustomer(deps: SyncDeps, customerId: string, now: Date): Promise<SyncResult> {
  return deps.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${customerId}, 16))`
    const billing = await findBillingByCustomer(tx, customerId)
    // Not ours (another deployment sharing the provider account), or created by a request that failed before storing it.
    if (!billing) return { unknown_customer: customerId }
    const subs = await provider(deps.config).subscriptions.list({ customer: customerId, status: 'all', limit: 10 })
    const state = derivePlan(deps.config, subs.data)
    await applySync(tx, billing.account_id, state, now)
    deps.log.info('billing synced', { account_id: billing.account_id, plan: state.plan, subscription_status: state.status })
    return { account_id: billing.account_id, plan: state.plan, status: state.status }
  }) as Promise<SyncResult>
}

/**
 * The browser's return from checkout or the portal: the same sync, run at once so that the new plan is in
 * force when the person lands; queued instead when the provider does not answer now.
 */
export async function syncOnReturn(deps: SyncDeps & { queues: Queues }, accountId: string, now: Date): Promise<void> {
  const billing = await findBillingByAccount(deps.sql, accountId)
  if (!billing) return
  try {
    await syncCustomer(deps, billing.customer_id, now)
  } catch (err) {
    deps.log.warn('billing sync on return failed; queued', { account_id: accountId, error: err })
    await deps.queues.enqueue('sync-billing', { customer_id: billing.customer_id })
  }
}
