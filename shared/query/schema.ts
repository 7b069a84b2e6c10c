// The plain-language query contract (docs/decisions.md §I-4.6.1, §13):
// the request body, the parsed intent and the response, one zod schema each.
import { z } from 'zod'
import { TimeZoneName } from '../accounts/schema.js'

export const MAX_QUERY_LENGTH = 500

export const QueryBody = z
  .object({
    query: z
      .string()
      .trim()
      .min(1, { error: 'must not be empty' })
      .max(MAX_QUERY_LENGTH, { error: `must be at most ${MAX_QUERY_LENGTH} characters` })
      .describe('A question about your stats in plain English, e.g. "how many signups yesterday?"'),
    residency: z
      .enum(['us'])
      .optional()
      .describe(
        '"us" asks for US-based model inference. It is not available yet and fails closed: the deterministic engine answers and no model is called.',
      ),
    time_zone: TimeZoneName.optional().describe(
      'The zone to read "today" or "last Monday" in when the account has none set (the page sends the browser\'s); the account\'s own zone wins, and UTC is used when neither is known',
    ),
  })
  .meta({ id: 'QueryBody' })
export type QueryBody = z.infer<typeof QueryBody>

export const Op = z.enum(['aggregate', 'compare', 'rank', 'peak', 'breakdown', 'unknown'])
export const Agg = z.enum(['sum', 'avg', 'min', 'max', 'count', 'last', 'change', 'percentile'])

export const Period = z.object({
  from: z.iso.datetime().describe('Inclusive start (UTC)'),
  to: z.iso.datetime().describe('Exclusive end (UTC)'),
  label: z.string().describe('How the period reads in the answer'),
})
export type Period = z.infer<typeof Period>

export const Intent = z
  .object({
    op: Op.describe(
      'aggregate: one figure per stat; compare: two periods; rank: stats ordered; peak: when a stat was highest (or lowest); breakdown: one stat in hourly or daily buckets; unknown: declined',
    ),
    agg: Agg.nullable().describe(
      'Counters default to sum, gauges to avg; rank by change orders by percentage change; percentile: gauges only, the ones in `percentiles`',
    ),
    percentiles: z
      .array(z.number())
      .optional()
      .describe(
        'agg percentile: the percentiles asked (p95 -> 95, median -> 50; "percentiles" alone -> 50, 95, 99), nearest-rank over the window',
      ),
    order: z.enum(['desc', 'asc']).optional().describe('rank and peak: highest first (desc) or lowest first (asc)'),
    stats: z.array(z.string()).describe('Stats the answer is about (all candidates for a rank)'),
    window: Period.nullable(),
    compare_to: Period.optional(),
    context: Period.optional().describe(
      'compare of a period still running (today, this week): the whole earlier period, given beside the same-stretch comparison',
    ),
    stretch: z
      .string()
      .optional()
      .describe(
        'compare of a period still running: the elapsed stretch both periods are compared over, e.g. "Mon 00:00 to Wed 01:52 Europe/Paris of each week"',
      ),
    timezone: z.string().describe('The IANA zone the periods are calendar periods of ("UTC" unless the account or the request names one)'),
    matched: z
      .array(z.object({ phrase: z.string(), stat: z.string(), how: z.enum(['exact', 'normalised', 'fuzzy']), score: z.number() }))
      .describe('How each stat was recognised in the question; fuzzy scores run from 0 (identical) to 1'),
    candidates: z.array(z.string()).optional().describe('When declined: the closest stats'),
    suggestions: z
      .array(z.object({ stat: z.string(), query: z.string() }))
      .optional()
      .describe('When declined: the question asked again about each candidate (the page links them)'),
    bucket_seconds: z
      .union([z.literal(3600), z.literal(86400)])
      .optional()
      .describe('breakdown: the bucket, an hour or a day (UTC)'),
    reason: z.string().optional().describe('When declined: why'),
    filter: z
      .record(z.string(), z.string())
      .optional()
      .describe('The tags asked for ("on host web1", "for host=web1"): only the series holding them are read'),
    group_by: z.string().optional().describe('A tag key answered one figure per value ("by host")'),
  })
  .meta({ id: 'QueryIntent' })
export type Intent = z.infer<typeof Intent>

/** One value the answer rests on: retrieved from the rollups, or derived from other records (by index). */
export const DataRecord = z
  .object({
    type: z.enum(['retrieved', 'derived']),
    stat: z.string().optional(),
    stat_kind: z.enum(['counter', 'gauge']).optional(),
    agg: z
      .string()
      .describe(
        'sum, avg, min, max, count, last, peak, difference, pct_change, or a percentile (p50, p95, p99.9: nearest-rank, exact under an hour, within 1 % beyond)',
      ),
    period: z
      .enum(['window', 'compare_to', 'context'])
      .optional()
      .describe('context: the whole earlier period given beside a same-stretch comparison'),
    from: z.iso.datetime().optional(),
    to: z.iso.datetime().optional(),
    t: z.number().int().optional().describe('Unix seconds: the bucket start of a peak, the time of a latest value'),
    bucket_seconds: z.number().int().optional(),
    value: z.number().nullable(),
    min: z.number().optional(),
    max: z.number().optional(),
    n: z.number().int().optional().describe('Observations behind the value'),
    of: z.array(z.number().int()).optional().describe('Derived: indexes of the records it is computed from'),
  })
  .meta({ id: 'QueryDataRecord' })
export type DataRecord = z.infer<typeof DataRecord>

export const QueryResponse = z
  .object({
    answer: z.string(),
    data: z.array(DataRecord).describe('Exactly the values the answer rests on, derived figures included'),
    intent: Intent,
    source: z.enum(['template', 'deterministic', 'llm']),
    llm_used: z.boolean(),
    verifier: z
      .string()
      .describe('Result of the number-by-number check of the answer against data, and why a model was not used when it was not'),
  })
  .meta({ id: 'QueryResponse' })
export type QueryResponse = z.infer<typeof QueryResponse>
