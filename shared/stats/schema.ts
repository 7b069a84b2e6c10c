// Shapes of the stat read routes.
import { z } from 'zod'
import { SENSITIVITIES } from '../anomalies/detector.js'
import { RANGE_NAMES } from './ranges.js'

export const StatJson = z
  .object({
    id: z.uuid(),
    name: z.string(),
    kind: z.enum(['counter', 'gauge']),
    description: z.string().nullable(),
    unit: z.string().nullable().optional().describe('Shown on axes and beside values; null: none'),
    higher_is: z
      .enum(['better', 'worse', 'neither'])
      .optional()
      .describe('Whether a rise is good news (better), bad news (worse, as for latency) or neither: colours the change figures'),
    created_at: z.iso.datetime(),
    last_point_at: z.iso.datetime().nullable().optional(),
    series: z.number().int().optional().describe('In the stat list: how many series (tag sets) the stat holds (docs/decisions.md §24)'),
  })
  .meta({ id: 'Stat' })

export const StatList = z.object({ stats: z.array(StatJson) }).meta({ id: 'StatList' })

export const WindowQuery = z.object({
  range: z
    .string()
    .optional()
    .describe(`One of ${RANGE_NAMES.join(', ')} (default 24h). Cannot be combined with from/to.`),
  from: z.string().optional().describe('ISO 8601 start'),
  to: z.string().optional().describe('ISO 8601 end (default now)'),
})

export const BucketJson = z
  .object({ t: z.number().int(), value: z.number(), min: z.number().optional(), max: z.number().optional(), n: z.number().int() })
  .meta({ id: 'Bucket', description: 'Counter: value is the sum. Gauge: value is the average, with min and max. n: observations.' })

export const RangeJson = z
  .object({
    requested_range: z.string(),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    bucket_seconds: z.number().int(),
    retention_days: z.number().int().optional().describe("The account plan's retention; older points are never returned"),
    range_clamped_by_retention: z
      .boolean()
      .optional()
      .describe('True when the requested window started before the retention and `from` was moved up'),
  })
  .meta({ id: 'Range' })

/** `percentiles=50,95,99`: numbers from 0 to 100 (decimals allowed, 99.9), comma-separated, at most 10. */
const PERCENTILE = /^(100(\.0+)?|\d{1,2}(\.\d{1,6})?)$/
export const StatDetailQuery = WindowQuery.extend({
  percentiles: z
    .string()
    .refine((s) => s.split(',').every((p) => PERCENTILE.test(p)), {
      error: 'must be numbers from 0 to 100 separated by commas, e.g. 50,95,99',
    })
    .refine((s) => s.split(',').length <= 10, { error: 'at most 10 percentiles' })
    .optional()
    .describe('Gauges only (400 on a counter): adds pNN to each point, the nearest-rank percentile of its observations, within 1 %'),
  filter: z
    .string()
    .max(2_200)
    .optional()
    .describe('Keeps the series whose tags hold every pair: host:web1,region:eu. Without it the stat reads as a whole.'),
  group_by: z
    .string()
    .regex(/^[a-z][a-z0-9_.-]{0,63}$/, { error: 'must be one tag key, e.g. host' })
    .optional()
    .describe(`Adds groups: one per value of this tag key (at most ${50} by volume, the rest as one group with other: true)`),
})

export const StatBucketJson = BucketJson.extend({
  p50: z.number().optional(),
  p95: z.number().optional(),
  p99: z.number().optional(),
})
  .catchall(z.number())
  .meta({ id: 'StatBucket', description: 'A Bucket, plus pNN (p50, p95, p99.9, ...) for each percentile asked for on a gauge.' })

export const TagsJson = z.record(z.string(), z.string()).meta({ id: 'Tags', description: "A series' tag set, key: value" })

export const GroupJson = z
  .object({ tags: TagsJson, other: z.literal(true).optional(), points: z.array(StatBucketJson) })
  .meta({ id: 'Group', description: 'One value of the group_by key (tags holds it), or the rest past the top 50 (other: true, tags {})' })

export const StatDetail = z
  .object({ stat: StatJson, range: RangeJson, points: z.array(StatBucketJson), groups: z.array(GroupJson).optional() })
  .meta({ id: 'StatDetail' })

export const StatTags = z
  .object({
    tags: z.array(z.object({ key: z.string(), values: z.array(z.object({ value: z.string(), series: z.number().int() })) })),
  })
  .meta({ id: 'StatTags', description: "A stat's tag keys, each value with how many series hold it" })

export const PatchStatBody = z
  .object({
    description: z.string().max(500, { error: 'must be at most 500 characters' }).nullable().optional(),
    unit: z
      .string()
      .trim()
      .min(1, { error: 'must not be empty (null clears it)' })
      .max(20, { error: 'must be at most 20 characters' })
      .nullable()
      .optional()
      .describe('Shown on axes and beside values, e.g. ms, requests, EUR; null clears it'),
    higher_is: z
      .enum(['better', 'worse', 'neither'], { error: 'must be one of better, worse, neither' })
      .optional()
      .describe('Whether a rise is good news: colours the change figures (latency: worse)'),
    anomaly_sensitivity: z
      .enum(SENSITIVITIES, { error: `must be one of ${SENSITIVITIES.join(', ')}` })
      .optional()
      .describe('How far from usual an hour must be to be flagged: low, normal (default) or high (5, 4 or 3 spreads)'),
  })
  .strict()
  .refine((b) => b.description !== undefined || b.unit !== undefined || b.higher_is !== undefined || b.anomaly_sensitivity !== undefined, {
    error: 'nothing to change: give description, unit, higher_is or anomaly_sensitivity',
  })
  .meta({ id: 'PatchStatBody' })

export const StatOne = z.object({ stat: StatJson }).meta({ id: 'StatOne' })
export const PatchedStat = z.object({ stat: StatJson.extend({ anomaly_sensitivity: z.enum(SENSITIVITIES) }) }).meta({ id: 'PatchedStat' })

export const ShareJson = z
  .object({ share: z.object({ token: z.string(), stat_id: z.uuid(), embed_url: z.string(), created_at: z.iso.datetime() }) })
  .meta({ id: 'Share' })

export const ShareState = z.object({ share: z.object({ stat_id: z.uuid(), created_at: z.iso.datetime() }).nullable() }).meta({
  id: 'ShareState',
  description: 'Whether the stat is shared, and since when; null when it is not. The token is shown only when created.',
})

export const StatExtent = z
  .object({ points: z.number().int(), oldest: z.iso.datetime().nullable(), newest: z.iso.datetime().nullable() })
  .meta({
    id: 'StatExtent',
    description: 'How many points the stat holds, and the times of its oldest and newest (backfilled history included)',
  })

export const EmbedQuery = z.object({
  token: z.string().optional().describe("The stat's share token"),
  range: z.string().optional().describe('One of 1h, 6h, 24h, 7d, 30d (default 24h)'),
})

export const EmbedJson = z
  .object({
    stat: z.object({ id: z.uuid(), name: z.string(), kind: z.enum(['counter', 'gauge']), description: z.string().nullable() }),
    range: RangeJson,
    points: z.array(BucketJson),
  })
  .meta({ id: 'Embed' })

const Repeatable = z.union([z.string(), z.array(z.string())])

export const ExportQuery = z.object({
  format: z.enum(['csv', 'json'], { error: 'must be csv or json' }).optional().describe('Default json'),
  stat: z.string().optional().describe('Exact stat name (all-stats route); omitted means every stat'),
  range: Repeatable.optional().describe(
    `One of ${RANGE_NAMES.join(', ')}. Given twice, empty or unknown: 400. Cannot be combined with from/to.`,
  ),
  window: Repeatable.optional().describe('Alias of range'),
  from: Repeatable.optional().describe("ISO 8601 start, clamped to the plan's retention"),
  to: Repeatable.optional().describe('ISO 8601 end (default now)'),
})
