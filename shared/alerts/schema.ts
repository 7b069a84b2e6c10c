// Request and response shapes of the alert routes (docs/decisions.md §I-2.4, §8).
import { z } from 'zod'
import { SENSITIVITIES } from '../anomalies/detector.js'
import { parseStatName } from '../ingest/names.js'
import { parseFilter } from '../ingest/tags.js'

export const CONDITIONS = ['above', 'below', 'pct_change', 'heartbeat', 'missing_data', 'sustained', 'anomaly'] as const
export type Condition = (typeof CONDITIONS)[number]
export const CHANNELS = ['webhook', 'slack', 'email', 'pagerduty', 'opsgenie'] as const
export type Channel = (typeof CHANNELS)[number]
export const ON_NO_DATA = ['keep', 'resolve', 'alert'] as const
export type OnNoData = (typeof ON_NO_DATA)[number]
/** The conditions that compare no value with a threshold: silence is measured against window_minutes, an anomaly by the detector. */
export const NO_THRESHOLD_CONDITIONS: readonly Condition[] = ['heartbeat', 'missing_data', 'anomaly']
/** The conditions on a stat's value, for which on_no_data applies (the others are about missing data already). */
export const THRESHOLD_CONDITIONS: readonly Condition[] = ['above', 'below', 'pct_change', 'sustained']
/**
 * What an alert compares with its threshold (docs/decisions.md §20): avg, the value of the last minute (a
 * counter's sum), or a percentile of a gauge over the last window_minutes. p90 besides the p50/p95/p99 of the
 * issue because the decision lists it; no other percentile, so that an alert's value names a column people know
 * and the stored check constraint stays a short list (the stats API, which only reads, takes any 0-100).
 */
export const AGGREGATIONS = ['avg', 'p50', 'p90', 'p95', 'p99'] as const
export type Aggregation = (typeof AGGREGATIONS)[number]
/** The conditions that may take a percentile: those on the stat's value itself, not on a change of it. */
export const PERCENTILE_CONDITIONS: readonly Condition[] = ['above', 'below', 'sustained']
/** The fraction of a percentile aggregation (p95 -> 0.95). */
export const percentileOf = (a: Exclude<Aggregation, 'avg'>) => Number(a.slice(1)) / 100

const StatName = z.string().transform((raw, ctx) => {
  const p = parseStatName(raw)
  if (!p.ok) ctx.addIssue({ code: 'custom', message: p.message })
  return p.ok ? p.value : raw
})

export const ChannelConfig = z
  .object({
    webhook_url: z.string().max(2048).optional().describe('webhook: http(s) URL; private and internal targets are refused'),
    slack_webhook_url: z.string().max(2048).optional().describe("slack: the channel's incoming-webhook URL"),
    email: z
      .email({ error: 'must be an e-mail address' })
      .max(254)
      .optional()
      .describe('email: the address; it must confirm a double opt-in first'),
    pagerduty_routing_key: z
      .string()
      .regex(/^[A-Za-z0-9]{20,64}$/, { error: 'must be the integration (routing) key of a PagerDuty Events API v2 integration' })
      .optional()
      .describe('pagerduty: the integration key (Events API v2)'),
    pagerduty_url: z
      .string()
      .max(2048)
      .optional()
      .describe('pagerduty: the Events API endpoint; default https://events.pagerduty.com/v2/enqueue'),
    opsgenie_api_key: z.string().min(8).max(200).optional().describe('opsgenie: the API integration key (sent as GenieKey)'),
    opsgenie_url: z
      .string()
      .max(2048)
      .optional()
      .describe('opsgenie: the API base; default https://api.opsgenie.com (EU: https://api.eu.opsgenie.com)'),
  })
  .strict()

/** Each channel's required channel_config field, and the optional ones it also reads. */
export const CHANNEL_FIELDS = {
  webhook: { required: 'webhook_url', optional: [] },
  slack: { required: 'slack_webhook_url', optional: [] },
  email: { required: 'email', optional: [] },
  pagerduty: { required: 'pagerduty_routing_key', optional: ['pagerduty_url'] },
  opsgenie: { required: 'opsgenie_api_key', optional: ['opsgenie_url'] },
} as const satisfies Record<Channel, { required: keyof z.infer<typeof ChannelConfig>; optional: (keyof z.infer<typeof ChannelConfig>)[] }>

/** Whether a channel_config field is read by a channel. */
export const channelReads = (channel: Channel, field: string) =>
  CHANNEL_FIELDS[channel].required === field || (CHANNEL_FIELDS[channel].optional as readonly string[]).includes(field)

const OnNoDataField = z
  .enum(ON_NO_DATA)
  .describe(
    'Threshold conditions only. What silence does: keep (nothing: a firing alert stays firing), resolve (a firing alert whose stat ' +
      'receives no point, by arrival time, for window_minutes, or 60 minutes when window_minutes was never given, resolves) or alert ' +
      '(that silence fires, like missing_data)',
  )

/** The conditions an alert per group judges (docs/decisions.md §24): the last minute's value of each group. */
export const GROUP_CONDITIONS: Condition[] = ['above', 'below', 'sustained']

export const CreateAlertBody = z
  .object({
    stat_name: StatName.describe("The stat's name (it need not exist yet)"),
    condition_type: z
      .enum(CONDITIONS)
      .describe(
        'anomaly: fires when the anomaly detector opens an incident on the stat, resolves when it closes (plans with anomaly detection)',
      ),
    threshold: z
      .number()
      .finite()
      .optional()
      .describe(
        'Required for above, below, pct_change and sustained; heartbeat, missing_data (whose limit is window_minutes) and anomaly have none and ignore one',
      ),
    window_minutes: z
      .number()
      .int()
      .min(1)
      .max(10_080)
      .optional()
      .describe(
        'Default 5. heartbeat/missing_data: staleness window; pct_change: lookback; sustained: how long the condition must hold; ' +
          'a percentile aggregation: the span it is taken over (the last window_minutes); ' +
          'with on_no_data resolve or alert, also how long a silence must last (60 minutes when not given)',
      ),
    aggregation: z
      .enum(AGGREGATIONS)
      .default('avg')
      .describe(
        "above, below and sustained only. avg (default): the value of the last minute (a counter's sum, a gauge's average); " +
          'p50, p90, p95, p99: gauges only, the nearest-rank percentile of the points of the last window_minutes, within 1 % ' +
          '(exact under an hour). A stat that exists as a counter is a 400; set once, like the condition',
      ),
    direction: z.enum(['above', 'below']).default('above').describe('sustained only: which side of the threshold must hold'),
    channel: z.enum(CHANNELS),
    channel_config: ChannelConfig,
    cooldown_minutes: z.number().int().min(0).max(10_080).default(0).describe('Suppresses repeat fires only; never a resolve'),
    on_no_data: OnNoDataField.default('keep'),
    filter: z
      .string()
      .max(2_200)
      .optional()
      .describe('Judges only the series whose tags hold every pair: host:web1,region:eu (docs/decisions.md §24)'),
    group_by: z
      .string()
      .regex(/^[a-z][a-z0-9_.-]{0,63}$/, { error: 'must be one tag key, e.g. host' })
      .optional()
      .describe(
        'Judges each value of this tag on its own (above, below and sustained on the last minute): each group fires and resolves alone, its payload carries tags',
      ),
    anomaly_sensitivity: z
      .enum(SENSITIVITIES, { error: `must be one of ${SENSITIVITIES.join(', ')}` })
      .optional()
      .describe(
        "anomaly only: fire only on incidents at least 5 (low), 4 (normal) or 3 (high) spreads out; default the stat's own sensitivity, which decides what is an incident",
      ),
  })
  .superRefine((b, ctx) => {
    if (b.anomaly_sensitivity !== undefined && b.condition_type !== 'anomaly')
      ctx.addIssue({ code: 'custom', path: ['anomaly_sensitivity'], message: `applies to anomaly alerts only, not ${b.condition_type}` })
    if (b.filter !== undefined) {
      const f = parseFilter(b.filter)
      if (!f.ok) ctx.addIssue({ code: 'custom', path: ['filter'], message: f.message })
    }
    if (b.group_by !== undefined && (!GROUP_CONDITIONS.includes(b.condition_type) || b.aggregation !== 'avg' || b.on_no_data !== 'keep'))
      ctx.addIssue({
        code: 'custom',
        path: ['group_by'],
        message: `applies to ${GROUP_CONDITIONS.join(', ')} with aggregation avg and on_no_data keep`,
      })
    if (b.threshold === undefined && !NO_THRESHOLD_CONDITIONS.includes(b.condition_type))
      ctx.addIssue({ code: 'custom', path: ['threshold'], message: 'is required' })
    if (b.aggregation !== 'avg' && !PERCENTILE_CONDITIONS.includes(b.condition_type)) {
      ctx.addIssue({
        code: 'custom',
        path: ['aggregation'],
        message: `${b.aggregation} applies to ${PERCENTILE_CONDITIONS.join(', ')} only, not ${b.condition_type}`,
      })
    }
    if (b.on_no_data !== 'keep' && !THRESHOLD_CONDITIONS.includes(b.condition_type)) {
      ctx.addIssue({
        code: 'custom',
        path: ['on_no_data'],
        message: `applies to threshold conditions only (${THRESHOLD_CONDITIONS.join(', ')}), not ${b.condition_type}`,
      })
    }
    const field = CHANNEL_FIELDS[b.channel].required
    if (!b.channel_config[field])
      ctx.addIssue({ code: 'custom', path: ['channel_config', field], message: `required for channel ${b.channel}` })
    for (const [other, value] of Object.entries(b.channel_config)) {
      if (value !== undefined && !channelReads(b.channel, other))
        ctx.addIssue({ code: 'custom', path: ['channel_config', other], message: `not used by channel ${b.channel}` })
    }
  })
  .meta({ id: 'CreateAlertBody' })
export type CreateAlertBody = z.infer<typeof CreateAlertBody>

export const AlertJson = z
  .object({
    id: z.uuid(),
    stat_name: z.string(),
    condition_type: z.enum(CONDITIONS),
    threshold: z.number(),
    window_minutes: z.number().int(),
    aggregation: z
      .enum(AGGREGATIONS)
      .describe('What the threshold is compared with: avg (the last minute) or a percentile over window_minutes'),
    direction: z.enum(['above', 'below']),
    channel: z.enum(CHANNELS),
    channel_config: ChannelConfig,
    cooldown_minutes: z.number().int(),
    state: z.enum(['ok', 'firing', 'pending_confirmation']),
    last_value: z.number().nullable(),
    last_evaluated_at: z.iso.datetime().nullable(),
    last_delivery_error: z.string().nullable(),
    last_delivery_failed_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    no_data_minutes: z.number().int().describe('How long a silence must last for on_no_data: window_minutes when it was given, else 60'),
    filter: z.record(z.string(), z.string()).nullable().optional().describe('The tags a judged series must hold (null: every series)'),
    group_by: z.string().nullable().optional().describe('The tag each value of which is judged on its own (null: the stat as one)'),
    groups: z
      .array(
        z.object({
          tags: z.record(z.string(), z.string()),
          state: z.enum(['ok', 'firing']),
          last_value: z.number().nullable(),
          last_evaluated_at: z.iso.datetime().nullable(),
        }),
      )
      .optional()
      .describe('An alert per group, read one at a time: each group with its own state'),
    muted_until: z.iso
      .datetime()
      .nullable()
      .describe('Deliveries (fires and resolves) are withheld until then; a breach still in force when it ends is delivered'),
    on_no_data: z.enum(ON_NO_DATA),
    anomaly_sensitivity: z.enum(SENSITIVITIES).nullable().describe("anomaly alerts: the sensitivity it fires at; null: the stat's"),
    paused: z
      .boolean()
      .describe(
        "Beyond the plan's alert count after a downgrade (the newest alerts): kept and listed, not evaluated, until the plan allows it again",
      ),
  })
  .meta({ id: 'Alert' })

export const CreatedAlert = z
  .object({
    alert: AlertJson,
    signing_secret: z.string().describe('HMAC-SHA256 key of X-Service-Signature; shown only here'),
    warnings: z
      .array(z.string())
      .optional()
      .describe('Present when the alert names a stat that has no points yet, with the closest existing name'),
  })
  .meta({ id: 'CreatedAlert' })

export const AlertList = z.object({ alerts: z.array(AlertJson) }).meta({ id: 'AlertList' })

/** The body POSTed to a webhook (docs/decisions.md §I-2.5). */
export const DeliveryPayload = z
  .object({
    alert_id: z.uuid(),
    event: z.enum(['fired', 'resolved', 'test']).describe('test: sent by POST /api/v1/alerts/{id}/test'),
    status: z.enum(['firing', 'resolved']),
    stat_name: z.string(),
    observed_value: z.number().nullable(),
    condition: z.enum(CONDITIONS),
    threshold: z.number(),
    triggered_at: z.iso.datetime(),
    message: z.string(),
    idempotency_key: z.string(),
    incident_key: z.string(),
    tags: z.record(z.string(), z.string()).optional().describe("An alert per group: the group's tags (its incident_key includes them)"),
  })
  .meta({ id: 'AlertDelivery' })
export type DeliveryPayload = z.infer<typeof DeliveryPayload>

export const DeliveryList = z
  .object({
    deliveries: z.array(
      z.object({
        id: z.string(),
        event: z.enum(['fired', 'resolved', 'test']),
        status: z.enum(['queued', 'delivered', 'failed']),
        attempts: z.number().int(),
        last_error: z.string().nullable(),
        observed_value: z.number().nullable(),
        created_at: z.iso.datetime(),
        delivered_at: z.iso.datetime().nullable(),
      }),
    ),
  })
  .meta({ id: 'AlertDeliveryList' })

/** PATCH /api/v1/alerts/:id: any of these; the condition and the channel stay as created. */
export const UpdateAlertBody = z
  .object({
    threshold: z.number().finite(),
    window_minutes: z.number().int().min(1).max(10_080),
    direction: z.enum(['above', 'below']).describe('sustained only'),
    cooldown_minutes: z.number().int().min(0).max(10_080),
    channel_config: ChannelConfig.describe(
      "The whole channel_config of the alert's channel; a changed e-mail address goes back to pending_confirmation",
    ),
    muted_until: z.iso
      .datetime({ offset: true, error: 'must be an ISO 8601 date and time (or null to unmute)' })
      .nullable()
      .describe('Withhold deliveries until then (null: unmute now)'),
    on_no_data: OnNoDataField,
  })
  .partial()
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to change: send at least one field' })
  .meta({ id: 'UpdateAlertBody' })
export type UpdateAlertBody = z.infer<typeof UpdateAlertBody>

export const AlertResponse = z.object({ alert: AlertJson }).meta({ id: 'AlertResponse' })

export const ALERT_EVENTS = ['fired', 'resolved', 'suppressed', 'muted', 'test', 'changed'] as const

export const AlertEventList = z
  .object({
    events: z.array(
      z.object({
        at: z.iso.datetime(),
        event: z
          .enum(ALERT_EVENTS)
          .describe(
            'fired/resolved: a transition delivered; suppressed: a fire held back by the cooldown; ' +
              'muted: a transition withheld by a mute, or a mute set; test: a test delivery; changed: a PATCH changed the alert (detail says what, from and to)',
          ),
        observed_value: z.number().nullable(),
        detail: z.string().nullable().describe('What happened, in words (why nothing was sent, until when a mute runs)'),
        delivery_status: z.enum(['queued', 'delivered', 'failed']).nullable().describe("The delivery's state; null when nothing was sent"),
        deliveries: z
          .array(
            z.object({
              attempt: z.number().int(),
              at: z.iso.datetime(),
              status_code: z.number().int().nullable().describe("The receiver's HTTP status; null for e-mail and when no answer came"),
              error: z.string().nullable(),
            }),
          )
          .describe('Every attempt of the delivery, first first'),
      }),
    ),
  })
  .meta({ id: 'AlertEventList' })

export const TestDelivery = z
  .object({ delivery_id: z.string().describe('Its idempotency key; the attempts show in GET /api/v1/alerts/{id}/events') })
  .meta({ id: 'AlertTestDelivery' })
