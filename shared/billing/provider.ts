// The payment provider's SDK (`stripe`), one client per configuration. Pointed
// at another server (the local stand-in) only through STRIPE_API_BASE.
import Stripe from 'stripe'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'
import { PAID_PLANS } from '../plans.js'

export type PaidPlan = (typeof PAID_PLANS)[number]
type BillingConfig = Pick<Config, 'env' | 'stripe'>

const clients = new WeakMap<object, Stripe>()

/** 503 naming the missing setting: billing is not configured on this deployment. */
export const notConfigured = (setting: string) =>
  new AppError('unavailable', 'billing_unavailable', `billing is not configured on this deployment: set ${setting}`, { setting })

/** The SDK client for this configuration; 503 naming STRIPE_SECRET_KEY when there is none. */
export function provider(config: BillingConfig): Stripe {
  const key = config.stripe.secretKey
  if (!key) throw notConfigured('STRIPE_SECRET_KEY')
  let client = clients.get(config.stripe)
  if (!client) {
    const base = config.stripe.apiBase ? new URL(config.stripe.apiBase) : undefined
    client = new Stripe(key, {
      // The SDK retries idempotent failures itself; our own retries are the sync job's.
      maxNetworkRetries: 1,
      timeout: 10_000,
      telemetry: false,
      appInfo: { name: 'metrics-service' },
      ...(base && {
        host: base.hostname,
        port: Number(base.port) || (base.protocol === 'https:' ? 443 : 80),
        protocol: base.protocol === 'http:' ? 'http' : 'https',
      }),
    })
    clients.set(config.stripe, client)
  }
  return client
}

/** The configured price of a paid plan; 503 naming its setting when missing. */
export function priceOf(config: BillingConfig, plan: PaidPlan): string {
  const price = config.stripe.prices[plan]
  if (!price) throw notConfigured(`STRIPE_PRICE_${plan.toUpperCase()}`)
  return price
}

/** The plan a price id stands for, or undefined for a price this deployment does not sell. */
export function planOfPrice(config: BillingConfig, priceId: string): PaidPlan | undefined {
  return PAID_PLANS.find((p) => config.stripe.prices[p] === priceId)
}
