// The provider's events: verified on the raw body with the SDK, each event id
// stored once, and a sync of the customer queued. The event's payload is never
// applied: the sync re-fetches the subscription (see sync.ts).
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import { invalid, unavailable } from '../errors.js'
import type { Logger } from '../log.js'
import type { Queues } from '../queues.js'
import { notConfigured, provider } from './provider.js'
import { forgetEvent, recordEvent } from './repo.js'

/** Event families that can change a subscription; others are stored and acknowledged. */
const SYNCED = /^(checkout\.session\.|customer\.subscription\.|invoice\.)/

export interface WebhookDeps {
  config: Config
  sql: Sql
  queues: Queues
  log: Logger
}

/** The customer an event concerns: the object itself for customer events, else its `customer` field. */
function customerOf(object: { object?: string; id?: string; customer?: unknown }): string | null {
  if (object.object === 'customer') return object.id ?? null
  const c = object.customer
  if (typeof c === 'string') return c
  if (c && typeof c === 'object' && typeof (c as { id?: unknown }).id === 'string') return (c as { id: string }).id
  return null
}

/** Verifies and records one delivery; `duplicate` when its event id was already received. */
export async function receiveEvent(deps: WebhookDeps, raw: string, signature: string | undefined): Promise<{ duplicate: boolean }> {
  const secret = deps.config.stripe.webhookSecret
  if (!secret) throw notConfigured('STRIPE_WEBHOOK_SECRET')
  if (!signature) throw invalid('signature_missing', 'missing Stripe-Signature header')
  let event: ReturnType<ReturnType<typeof provider>['webhooks']['constructEvent']>
  try {
    // The SDK's check: HMAC-SHA256 over "t.<raw body>", and t within its default tolerance (300 s).
    event = provider(deps.config).webhooks.constructEvent(raw, signature, secret)
  } catch (err) {
    throw invalid('signature_invalid', `webhook signature verification failed: ${(err as Error).message}`)
  }
  const customer = customerOf(event.data.object as { object?: string; id?: string; customer?: unknown })
  if (!(await recordEvent(deps.sql, event.id, event.type, customer))) return { duplicate: true }
  if (customer && SYNCED.test(event.type)) {
    try {
      await deps.queues.enqueue('sync-billing', { customer_id: customer })
    } catch (err) {
      // Not queued: forget the event so that the provider's retry is processed rather than taken for a duplicate.
      await forgetEvent(deps.sql, event.id).catch(() => {})
      deps.log.warn('billing sync not queued', { event_id: event.id, error: err })
      throw unavailable('could not queue the billing sync; the provider will retry')
    }
  }
  return { duplicate: false }
}
