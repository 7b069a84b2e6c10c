// Request and response shapes of the write routes. The number, name and
// timestamp grammar is not expressible in JSON Schema, so fields are typed
// loosely here and validated exactly by validatePoint (one contract for every route).
import { z } from 'zod'

// Every field is optional here: zod 4 would refuse an absent key with its own message, and an absent
// count or value must reach validatePoint for the interface's (`invalid value: missing`).
const NumberInput = (field: string) =>
  z
    .unknown()
    .optional()
    .describe(
      `A decimal number, as a JSON number or a decimal string (optional sign, digits, fraction, exponent); magnitude at most 1e15. Empty, null, booleans, hex, NaN and Infinity are rejected with "invalid ${field}: ...".`,
    )
const T = z
  .unknown()
  .optional()
  .describe(
    'Unix seconds (number or digit string); server receive time when omitted. From 2000-01-01 up to 5 minutes ahead; fractions truncated.',
  )
const Ikey = z.unknown().optional().describe('Idempotency key, at most 128 characters. A retry with the same t and ikey is stored once.')
const TagsInput = z
  .unknown()
  .optional()
  .describe(
    'The series\' tags (docs/decisions.md §24), e.g. {"host": "web1"}: at most 10; key [a-z][a-z0-9_.-]{0,63}; value 1 to 200 printable characters. Absent: the untagged series.',
  )

export const CountBody = z.object({ count: NumberInput('count'), t: T, ikey: Ikey, tags: TagsInput }).meta({ id: 'CountBody' })
export const ValueBody = z.object({ value: NumberInput('value'), t: T, ikey: Ikey, tags: TagsInput }).meta({ id: 'ValueBody' })

export const WriteOk = z
  .object({
    status: z.literal('ok'),
    replay: z
      .enum(['averages_with_existing', 'sums_with_existing', 'duplicate_ignored'])
      .optional()
      .describe('Only on a single-point write whose explicit t already holds a point (best effort).'),
  })
  .meta({ id: 'WriteOk' })

export const MAX_V1_BATCH = 1_000

export const PointsBody = z
  .object({
    points: z
      .array(
        z.object({
          stat: z.unknown().optional(),
          count: z.unknown().optional(),
          value: z.unknown().optional(),
          t: T,
          ikey: Ikey,
          tags: TagsInput,
        }),
      )
      .max(MAX_V1_BATCH, { error: `at most ${MAX_V1_BATCH} points per request` }),
  })
  .meta({ id: 'PointsBody' })

export const PointsOk = z
  .object({ status: z.literal('ok'), accepted: z.number().int(), duplicates: z.number().int() })
  .meta({ id: 'PointsOk' })
