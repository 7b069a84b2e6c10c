// Request and response shapes of the analytics read routes (docs/decisions.md §I-4.8,
// docs/decisions.md §12): one schema per shape, for validation, types and
// the OpenAPI document.
import { z } from 'zod'
import { DECIMAL_TEXT, MAX_MAGNITUDE } from '../ingest/numbers.js'
import { RANGE_NAMES } from '../stats/ranges.js'
import { AGGREGATIONS } from '../alerts/schema.js'

// Query values arrive as text, or as an array when a parameter is repeated; every
// parameter here is single, so an array is "given more than once" in the message.
const once = (what: string) => (iss: { input?: unknown }) =>
  iss.input === undefined ? 'required' : Array.isArray(iss.input) ? 'given more than once' : what

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: once(`must be one of ${values.join(', ')}`) })

const StatParam = z
  .string({ error: once('must be a stat name') })
  .min(1, { error: 'required' })
  .describe("The stat's name")

/** A whole number in [min, max], written in decimal digits (an empty value is not 0). */
const intParam = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`
  return z
    .string({ error: once(message) })
    .regex(/^\d{1,6}$/, { error: message })
    .transform(Number)
    .pipe(z.number().int().min(min, { error: message }).max(max, { error: message }))
}

/** A decimal number in the grammar and bounds of data points (docs/decisions.md §I-2.2). */
const numberParam = () => {
  const message = `must be a decimal number of magnitude at most ${MAX_MAGNITUDE}`
  return z
    .string({ error: once(message) })
    .trim()
    .regex(DECIMAL_TEXT, { error: message })
    .transform(Number)
    .pipe(z.number().min(-MAX_MAGNITUDE, { error: message }).max(MAX_MAGNITUDE, { error: message }))
}

export const CORRELATION_METHODS = ['spearman', 'pearson', 'departures'] as const
export const CORRELATION_TRANSFORMS = ['diff', 'none'] as const
export const MAX_LAG = 24

export const CorrelationsQuery = z.object({
  stat: StatParam,
  range: oneOf(RANGE_NAMES as unknown as [string, ...string[]])
    .default('7d')
    .describe(
      `One of ${RANGE_NAMES.join(', ')} (default 7d), clamped to the plan's retention. Compared at one-hour buckets, complete hours only.`,
    ),
  // The default is the method that did best on the labelled set of `npm run bench:analytics`:
  // every related pair in its target's top 3 and no unrelated pair at 0.3, where Spearman and Pearson on
  // the bare differences ranked half the related pairs lower and scored unrelated stats with the same daily cycle up to 0.54.
  method: oneOf(CORRELATION_METHODS)
    .default('departures')
    .describe(
      'departures (default): Pearson on how far each hour departs from what the stat usually does at that hour of the day, in robust spreads (median and median absolute deviation), so shared spikes weigh by their size and a shared daily cycle does not count; spearman: ranks, ties as mid-ranks (one large shared spike counts as one rank step); pearson: the values as they are',
    ),
  transform: oneOf(CORRELATION_TRANSFORMS)
    .default('diff')
    .describe(
      'diff (default): correlate hour-to-hour changes, so shared trends and daily cycles do not make unrelated stats look related; none: the hourly values',
    ),
  max_lag: intParam(0, MAX_LAG)
    .default(0)
    .describe(
      `0 to ${MAX_LAG} (default 0): also try shifting each stat up to this many hours either way and report the shift that matches best`,
    ),
})
export type CorrelationsQuery = z.infer<typeof CorrelationsQuery>

export const EXCLUSION_REASONS = ['no_data', 'short', 'constant'] as const

export const CorrelationsResponse = z
  .object({
    target: z.string().describe('The stat compared against the others'),
    target_kind: z.enum(['counter', 'gauge']),
    target_n: z.number().int().describe("The target's usable hourly values (after the transform); 24 are needed"),
    window: z.object({ from: z.iso.datetime(), to: z.iso.datetime(), bucket_seconds: z.literal(3600) }),
    method: z.enum(CORRELATION_METHODS),
    transform: z.enum(CORRELATION_TRANSFORMS),
    max_lag: z.number().int(),
    results: z.array(
      z.object({
        stat_name: z.string(),
        kind: z.enum(['counter', 'gauge']),
        coefficient: z.number().describe('-1 to 1, rounded to 4 decimals; sorted by absolute value, strongest first'),
        lag_buckets: z
          .number()
          .int()
          .describe(
            'The best shift in hours: > 0 means this stat moves first and the target follows that many hours later; < 0 means the target moves first',
          ),
        n: z.number().int().describe('Hourly pairs the coefficient rests on'),
      }),
    ),
    excluded: z.array(
      z.object({
        stat_name: z.string(),
        reason: z
          .enum(EXCLUSION_REASONS)
          .describe(
            'no_data: nothing in the window; short: fewer than 24 overlapping hours at every lag; constant: no variation over the overlap',
          ),
        detail: z.string(),
      }),
    ),
    omitted: z.array(z.string()).describe('What the answer cannot tell, and the stats left out of the comparison'),
  })
  .meta({ id: 'Correlations' })

export const THRESHOLD_CONDITIONS = ['above', 'below'] as const

export const ThresholdsQuery = z.object({
  stat: StatParam,
  condition_type: oneOf(THRESHOLD_CONDITIONS).default('above').describe('above (default) or below'),
  lookback: oneOf(RANGE_NAMES as unknown as [string, ...string[]])
    .default('30d')
    .describe(`One of ${RANGE_NAMES.join(', ')} (default 30d), clamped to the plan's retention`),
  cooldown_minutes: intParam(0, 10_080).default(0).describe('As on the alert: suppresses repeat fires only (default 0)'),
  threshold: numberParam().optional().describe('Back-test this one value instead of suggesting'),
  aggregation: oneOf(AGGREGATIONS)
    .default('avg')
    .describe(
      "As on the alert: avg (default, the last minute's value) or p50, p90, p95, p99 of a gauge over window_minutes (400 on a counter)",
    ),
  window_minutes: intParam(1, 10_080)
    .default(5)
    .describe("A percentile aggregation's window, as on the alert (default 5); unused with avg"),
})
export type ThresholdsQuery = z.infer<typeof ThresholdsQuery>

const Incident = z.object({
  started_at: z.iso.datetime().describe('The evaluation that moved into breach'),
  ended_at: z.iso.datetime().nullable().describe('The evaluation that saw it recover; null: still in breach at the end'),
  notified: z.boolean().describe('false: the fire was suppressed by the cooldown (and its recovery is silent)'),
  peak: z.number().describe('The most extreme minute value of the incident'),
})

export const ThresholdsResponse = z
  .object({
    stat: z.string(),
    kind: z.enum(['counter', 'gauge']),
    condition_type: z.enum(THRESHOLD_CONDITIONS),
    aggregation: z.enum(AGGREGATIONS).describe('What the minute values are: avg (the last minute) or a percentile over window_minutes'),
    window_minutes: z.number().int().optional().describe("A percentile aggregation's window"),
    cooldown_minutes: z.number().int(),
    basis: z.object({
      from: z.iso.datetime(),
      to: z.iso.datetime(),
      value_definition: z.string(),
      evaluations: z.number().int().describe('Minutes replayed (one evaluation at the end of each)'),
      minutes_with_value: z.number().int().describe('Minutes that had a value (the distribution is over these)'),
    }),
    distribution: z.object({
      min: z.number().nullable(),
      p50: z.number().nullable(),
      p90: z.number().nullable(),
      p95: z.number().nullable(),
      p99: z.number().nullable(),
      max: z.number().nullable(),
    }),
    largest_minutes: z
      .array(
        z.object({
          at: z.iso.datetime().describe('The start of the minute (a point at 20:40:30 is in the minute at 20:40)'),
          value: z.number(),
        }),
      )
      .describe(
        'The (up to 3) most extreme minute values of the lookback, largest first for above, smallest first for below: each suggestion says how many it catches',
      ),
    suggestions: z.array(
      z.object({
        threshold: z.number(),
        catches_largest: z
          .number()
          .int()
          .describe(
            'How many of largest_minutes breach this threshold (above and below are strict: a suggestion never equals the extreme)',
          ),
        quantile: z
          .number()
          .nullable()
          .describe(
            'Suggestions: the quantile of the minute values the threshold was drawn from (before rounding to two significant figures). A given threshold: its quantile rank among the minute values (ties count as their middle); null without data',
          ),
        would_have_fired: z.number().int().describe('Deliveries with event fired the alert would have sent'),
        minutes_in_breach: z.number().int().describe('Minutes in which the condition held'),
        suppressed_by_cooldown: z.number().int().describe('Moves into breach whose fire the cooldown swallowed'),
        incidents: z.array(Incident).describe('The first 20 moves into breach'),
      }),
    ),
    warnings: z.array(z.string()),
  })
  .meta({ id: 'ThresholdSuggestions' })
