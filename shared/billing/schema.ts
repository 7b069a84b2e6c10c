// Request and response shapes of the billing routes (docs/decisions.md §9, §14).
import { z } from 'zod'
import { PAID_PLANS, PLAN_NAMES } from '../plans.js'

export const CheckoutBody = z
  .object({
    plan: z
      .string()
      .refine((p) => (PAID_PLANS as readonly string[]).includes(p), {
        error: `must be one of ${PAID_PLANS.join(', ')} (the free plan needs no checkout)`,
      })
      .describe(`The paid plan to subscribe to: ${PAID_PLANS.join(', ')}`),
  })
  .meta({ id: 'CheckoutBody' })

export const CheckoutSession = z
  .object({ url: z.url().describe('The hosted checkout page: send the browser there'), id: z.string().describe('The checkout session id') })
  .meta({ id: 'CheckoutSession' })

export const BillingState = z
  .object({
    plan: z.enum(PLAN_NAMES),
    subscription: z
      .object({
        id: z.string(),
        status: z
          .string()
          .describe("The provider's subscription status at the last sync: active, trialing, past_due, canceled, unpaid, ..."),
        past_due: z.boolean().describe('A payment failed and the provider is retrying it; the plan is kept meanwhile'),
        current_period_end: z.iso.datetime().nullable().describe('The end of the period paid for; it renews then only while in_force'),
        in_force: z
          .boolean()
          .describe(
            'Whether the plan comes from this subscription (active, trialing, past_due); false once it was canceled or lapsed: the account is on the free plan and nothing renews',
          ),
      })
      .nullable(),
    synced_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'BillingState' })

export const ReturnQuery = z.object({
  session_id: z.string().max(255).optional().describe('The checkout session (success return)'),
  cancelled: z.literal('1').optional().describe('Set on the cancel return'),
})

export const WebhookReceipt = z.object({ received: z.literal(true), duplicate: z.boolean() }).meta({ id: 'WebhookReceipt' })
