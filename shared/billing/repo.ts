// Billing rows: the account's customer at the provider and the events already received.
import { recordAudit } from '../audit/audit.js'
import type { Db } from '../db.js'
import { DETECTING_PLANS, type PlanName } from '../plans.js'
import { markHistoryForScoring } from '../anomalies/sweep.js'

export interface BillingCustomer {
  account_id: string
  customer_id: string
  subscription_id: string | null
  subscription_status: string | null
  price_id: string | null
  past_due: boolean
  current_period_end: Date | null
  synced_at: Date | null
}

export async function findBillingByAccount(sql: Db, accountId: string): Promise<BillingCustomer | null> {
  const [row] = await sql<BillingCustomer[]>`select * from billing_customers where account_id = ${accountId}`
  return row ?? null
}

export async function findBillingByCustomer(sql: Db, customerId: string): Promise<BillingCustomer | null> {
  const [row] = await sql<BillingCustomer[]>`select * from billing_customers where customer_id = ${customerId}`
  return row ?? null
}

/** Keeps the account's customer id; when two requests raced, the first stored wins and is returned. */
export async function rememberCustomer(sql: Db, accountId: string, customerId: string): Promise<string> {
  const [row] = await sql<{ customer_id: string }[]>`
    insert into billing_customers (account_id, customer_id) values (${accountId}, ${customerId})
    on conflict (account_id) do update set account_id = excluded.account_id
    returning customer_id`
  return row.customer_id
}

/** Stores an event id once; false when it was already stored (a redelivery). */
export async function recordEvent(sql: Db, id: string, type: string, customerId: string | null): Promise<boolean> {
  const rows =
    await sql`insert into billing_events (id, type, customer_id) values (${id}, ${type}, ${customerId}) on conflict (id) do nothing returning 1`
  return rows.length > 0
}

/** Forgets an event whose sync could not be queued, so that the provider's redelivery is processed. */
export async function forgetEvent(sql: Db, id: string): Promise<void> {
  await sql`delete from billing_events where id = ${id}`
}

export interface SyncedState {
  plan: PlanName
  subscriptionId: string | null
  status: string | null
  priceId: string | null
  pastDue: boolean
  currentPeriodEnd: Date | null
}

/** Writes what a sync derived: the account's plan and the subscription it came from. */
export async function applySync(sql: Db, accountId: string, s: SyncedState, now: Date): Promise<void> {
  const [changed] = await sql<{ was: PlanName }[]>`
    update accounts a set plan = ${s.plan} from accounts old
    where a.id = ${accountId} and old.id = a.id and a.plan is distinct from ${s.plan}
    returning old.plan as was`
  // An upgrade into anomaly detection scores the history written while the plan did not.
  // A plan change is audited like any other change to the account (docs/decisions.md §23), its actor the provider.
  if (changed)
    await recordAudit(sql, {
      accountId,
      actor: { type: 'billing', id: null },
      action: 'plan.change',
      target: `account:${accountId}`,
      ip: null,
      summary: { before: { plan: changed.was }, after: { plan: s.plan, subscription_status: s.status } },
    })
  if (changed && !DETECTING_PLANS.includes(changed.was) && DETECTING_PLANS.includes(s.plan))
    await markHistoryForScoring(sql, accountId, now)
  await sql`
    update billing_customers set subscription_id = ${s.subscriptionId}, subscription_status = ${s.status}, price_id = ${s.priceId},
      past_due = ${s.pastDue}, current_period_end = ${s.currentPeriodEnd}, synced_at = ${now}
    where account_id = ${accountId}`
}
