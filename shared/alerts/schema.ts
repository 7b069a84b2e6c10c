// Request and response shapes of the alert routes (interface 2.4, decisions.md section 8).
import { z } from 'zod'
import { parseStatName } from '../ingest/names.js'

export const CONDITIONS = ['above', 'below', 'pct_change', 'heartbeat', 'missing_data', 'sustained'] as const
export type Condition = (typeof CONDITIONS)[number]
export const CHANNELS = ['webhook', 'slack', 'email'] as const
export type Channel = (typeof CHANNELS)[number]

const StatName = z.string().transform((raw, ctx) => {
  const p = parseStatName(raw)
  if (!p.ok) ctx.addIssue({ code: 'custom', message: p.message })
  return p.ok ? p.value : raw
})

export const ChannelConfig = z
  .object({
    webhook_url: z.string().max(2048).optional().describe('webhook: http(s) URL; private and internal targets are refused'),
    slack_webhook_url: z.string().max(2048).optional().describe('slack: the channel\'s incoming-webhook URL'),
    email: z.email({ error: 'must be an e-mail address' }).max(254).optional().describe('email: the address; it must confirm a double opt-in first'),
  })
  .strict()

export const CreateAlertBody = z
  .object({
    stat_name: StatName.describe('The stat\'s name (it need not exist yet)'),
    condition_type: z.enum(CONDITIONS),
    threshold: z.number().finite(),
    window_minutes: z.number().int().min(1).max(10_080).default(5)
      .describe('heartbeat/missing_data: staleness window; pct_change: lookback; sustained: how long the condition must hold'),
    direction: z.enum(['above', 'below']).default('above').describe('sustained only: which side of the threshold must hold'),
    channel: z.enum(CHANNELS),
    channel_config: ChannelConfig,
    cooldown_minutes: z.number().int().min(0).max(10_080).default(0).describe('Suppresses repeat fires only; never a resolve'),
  })
  .superRefine((b, ctx) => {
    const need = { webhook: 'webhook_url', slack: 'slack_webhook_url', email: 'email' } as const
    const field = need[b.channel]
    if (!b.channel_config[field]) ctx.addIssue({ code: 'custom', path: ['channel_config', field], message: `required for channel ${b.channel}` })
    for (const other of Object.values(need)) {
      if (other !== field && b.channel_config[other] !== undefined) ctx.addIssue({ code: 'custom', path: ['channel_config', other], message: `not used by channel ${b.channel}` })
    }
  })
  .meta({ id: 'CreateAlertBody' })
export type CreateAlertBody = z.infer<typeof CreateAlertBody>

export const AlertJson = z
  .object({
    id: z.uuid(), stat_name: z.string(), condition_type: z.enum(CONDITIONS), threshold: z.number(), window_minutes: z.number().int(),
    direction: z.enum(['above', 'below']), channel: z.enum(CHANNELS), channel_config: ChannelConfig, cooldown_minutes: z.number().int(),
    state: z.enum(['ok', 'firing', 'pending_confirmation']), last_value: z.number().nullable(), last_evaluated_at: z.iso.datetime().nullable(),
    last_delivery_error: z.string().nullable(), last_delivery_failed_at: z.iso.datetime().nullable(), created_at: z.iso.datetime(),
    paused: z.boolean().describe('Beyond the plan\'s alert count after a downgrade (the newest alerts): kept and listed, not evaluated, until the plan allows it again'),
  })
  .meta({ id: 'Alert' })

export const CreatedAlert = z
  .object({
    alert: AlertJson,
    signing_secret: z.string().describe('HMAC-SHA256 key of X-Service-Signature; shown only here'),
    warnings: z.array(z.string()).optional().describe('Present when the alert names a stat that has no points yet, with the closest existing name'),
  })
  .meta({ id: 'CreatedAlert' })

export const AlertList = z.object({ alerts: z.array(AlertJson) }).meta({ id: 'AlertList' })

/** The body POSTed to a webhook (interface 2.5). */
export const DeliveryPayload = z
  .object({
    alert_id: z.uuid(), event: z.enum(['fired', 'resolved']), status: z.enum(['firing', 'resolved']), stat_name: z.string(),
    observed_value: z.number().nullable(), condition: z.enum(CONDITIONS), threshold: z.number(), triggered_at: z.iso.datetime(),
    message: z.string(), idempotency_key: z.string(), incident_key: z.string(),
  })
  .meta({ id: 'AlertDelivery' })
export type DeliveryPayload = z.infer<typeof DeliveryPayload>

export const DeliveryList = z
  .object({
    deliveries: z.array(z.object({
      id: z.string(), event: z.enum(['fired', 'resolved']), status: z.enum(['queued', 'delivered', 'failed']), attempts: z.number().int(),
      last_error: z.string().nullable(), observed_value: z.number().nullable(), created_at: z.iso.datetime(), delivered_at: z.iso.datetime().nullable(),
    })),
  })
  .meta({ id: 'AlertDeliveryList' })
