// Shapes of the stat read routes.
import { z } from 'zod'
import { RANGE_NAMES } from './ranges.js'

export const StatJson = z
  .object({
    id: z.uuid(), name: z.string(), kind: z.enum(['counter', 'gauge']), description: z.string().nullable(),
    created_at: z.iso.datetime(), last_point_at: z.iso.datetime().nullable().optional(),
  })
  .meta({ id: 'Stat' })

export const StatList = z.object({ stats: z.array(StatJson) }).meta({ id: 'StatList' })

export const WindowQuery = z.object({
  range: z.string().optional().describe(`One of ${RANGE_NAMES.join(', ')} (default 24h). Cannot be combined with from/to.`),
  from: z.string().optional().describe('ISO 8601 start'),
  to: z.string().optional().describe('ISO 8601 end (default now)'),
})

export const BucketJson = z
  .object({ t: z.number().int(), value: z.number(), min: z.number().optional(), max: z.number().optional(), n: z.number().int() })
  .meta({ id: 'Bucket', description: 'Counter: value is the sum. Gauge: value is the average, with min and max. n: observations.' })

export const RangeJson = z
  .object({ requested_range: z.string(), from: z.iso.datetime(), to: z.iso.datetime(), bucket_seconds: z.number().int() })
  .meta({ id: 'Range' })

export const StatDetail = z.object({ stat: StatJson, range: RangeJson, points: z.array(BucketJson) }).meta({ id: 'StatDetail' })
