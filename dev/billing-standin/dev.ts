// `npm run dev` without STRIPE_SECRET_KEY: starts the payment stand-in and
// points the service's billing settings at it, so that checkout, the portal
// and the webhook work on a laptop with no keys at all.
import { randomBytes } from 'node:crypto'
import type { Config } from '../../shared/config.js'
import { PAID_PLANS, PLANS } from '../../shared/plans.js'
import { startPaymentStandin, type PaymentStandin } from './server.js'

export interface DevBilling {
  /** The configuration to run with: unchanged when a real key is set, else pointing at the stand-in. */
  config: Config
  /** Tells the stand-in where the API listens (its webhook). */
  attach(apiUrl: string): void
  stop(): Promise<void>
}

export async function startDevBilling(config: Config, log: (line: string) => void): Promise<DevBilling> {
  if (config.stripe.secretKey) return { config, attach() {}, async stop() {} }
  const secretKey = `sk_test_standin_${randomBytes(12).toString('hex')}`
  const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`
  const prices = PAID_PLANS.map((plan) => ({
    id: config.stripe.prices[plan] ?? `price_${plan}`,
    label: `${plan[0].toUpperCase()}${plan.slice(1)}`,
    amount: PLANS[plan].priceUsdPerMonth,
  }))
  const standin: PaymentStandin = await startPaymentStandin({ secretKey, webhookSecret, prices, log })
  log(`payment stand-in at ${standin.url} (no STRIPE_SECRET_KEY set): checkout and portal pages are local, no card is charged`)
  const stripe = Object.freeze({
    secretKey,
    webhookSecret,
    apiBase: standin.url,
    prices: Object.freeze({ starter: prices[0].id, pro: prices[1].id, business: prices[2].id }),
  })
  return {
    config: Object.freeze({ ...config, stripe }),
    attach: (apiUrl) => standin.setWebhookUrl(`${apiUrl}/api/payments/webhook`),
    stop: () => standin.close(),
  }
}
