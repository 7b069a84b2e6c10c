// Checkout and portal sessions at the payment provider. A customer is created
// before the first checkout and kept on the account, so that every later
// event, sync and portal visit keys on it.
import Stripe from 'stripe'
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import { AppError, conflict, unavailable } from '../errors.js'
import type { Account } from '../accounts/repo.js'
import { priceOf, provider, type PaidPlan } from './provider.js'
import { findBillingByAccount, rememberCustomer } from './repo.js'
import { LIVE } from './sync.js'

export interface BillingDeps {
  config: Config
  sql: Sql
}

/** Runs a provider call; its failures become a 503 that says what went wrong (never the key). */
export async function callProvider<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (err instanceof Stripe.errors.StripeAuthenticationError) {
      throw new AppError(
        'unavailable',
        'billing_unavailable',
        `the payment provider refused the configured key (STRIPE_SECRET_KEY) while ${what}`,
      )
    }
    if (err instanceof Stripe.errors.StripeError) throw unavailable(`the payment provider failed while ${what}: ${err.message}`)
    throw err
  }
}

/** The account's customer at the provider, created on first use. */
export async function ensureCustomer(deps: BillingDeps, account: Account): Promise<string> {
  const existing = await findBillingByAccount(deps.sql, account.id)
  if (existing) return existing.customer_id
  const stripe = provider(deps.config)
  // The same idempotency key for the same account: two racing first checkouts get one customer.
  const customer = await callProvider('creating the customer', () =>
    stripe.customers.create({ email: account.email, metadata: { account_id: account.id } }, { idempotencyKey: `customer-${account.id}` }),
  )
  return rememberCustomer(deps.sql, account.id, customer.id)
}

/** Opens a hosted checkout for a paid plan; an account already paying changes plan in the portal instead (409). */
export async function startCheckout(
  deps: BillingDeps,
  account: Account,
  plan: PaidPlan,
  baseUrl: string,
): Promise<{ url: string; id: string }> {
  const stripe = provider(deps.config)
  const price = priceOf(deps.config, plan)
  const customer = await ensureCustomer(deps, account)
  // Asked of the provider, not of the last sync: a payment whose events are still on their way counts too.
  const subs = await callProvider('reading the subscriptions', () => stripe.subscriptions.list({ customer, status: 'all', limit: 10 }))
  const live = subs.data.find((s) => LIVE.has(s.status))
  if (live) {
    throw conflict(
      'already_subscribed',
      `the account already has a ${live.status} subscription; change or cancel it in the billing portal (GET /api/billing/portal)`,
    )
  }
  const metadata = { account_id: account.id, plan }
  const session = await callProvider('creating the checkout session', () =>
    stripe.checkout.sessions.create({
      mode: 'subscription',
      customer,
      client_reference_id: account.id,
      line_items: [{ price, quantity: 1 }],
      success_url: `${baseUrl}/api/billing/return?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${baseUrl}/api/billing/return?cancelled=1`,
      metadata,
      subscription_data: { metadata },
    }),
  )
  if (!session.url) throw unavailable('the payment provider returned a checkout session without a URL')
  return { url: session.url, id: session.id }
}

/** A billing-portal session for the account (change plan, cancel, invoices); its URL. */
export async function openPortal(deps: BillingDeps, account: Account, baseUrl: string): Promise<string> {
  const stripe = provider(deps.config)
  const customer = await ensureCustomer(deps, account)
  const session = await callProvider('opening the billing portal', () =>
    stripe.billingPortal.sessions.create({ customer, return_url: `${baseUrl}/api/billing/return` }),
  )
  return session.url
}
