// Request and response shapes of the dashboard routes (docs/decisions.md §17).
import { z } from 'zod'
import { parseStatName } from '../ingest/names.js'
import { RANGE_NAMES } from '../stats/ranges.js'
import { BucketJson, RangeJson } from '../stats/schema.js'

export const MAX_CARDS = 50
export const MAX_STATS_PER_CARD = 5

const StatName = z.string().transform((raw, ctx) => {
  const p = parseStatName(raw)
  if (!p.ok) ctx.addIssue({ code: 'custom', message: p.message })
  return p.ok ? p.value : raw
})

const Range = z.enum(RANGE_NAMES as [string, ...string[]], { error: `must be one of ${RANGE_NAMES.join(', ')}` })
const Name = z.string().trim().min(1, { error: 'must not be empty' }).max(100, { error: 'must be at most 100 characters' })

export const CardInput = z
  .object({
    // Present when a PATCH keeps a card it read: the card keeps its id (the page's keys and links follow it).
    id: z.uuid().optional().describe('A card of this dashboard to keep (from a read); omitted for a new card'),
    title: z.string().trim().max(100, { error: 'must be at most 100 characters' }).optional().describe("Defaults to the stats' names"),
    stats: z
      .array(StatName)
      .min(1, { error: 'a card holds at least one stat' })
      .max(MAX_STATS_PER_CARD, { error: `a card holds at most ${MAX_STATS_PER_CARD} stats` })
      .refine((s) => new Set(s).size === s.length, { error: 'names a stat twice' })
      .describe("1 to 5 names of the account's stats, drawn overlaid"),
    range: Range.nullable().optional().describe("This card's own range; omitted or null: the dashboard's"),
    filter: z
      .string()
      .max(2_200)
      .nullable()
      .optional()
      .describe(
        "Draws only the series whose tags hold every pair (host:web1,region:eu), as a stat read's filter; omitted or null: the stats as a whole",
      ),
    group_by: z
      .string()
      .regex(/^[a-z][a-z0-9_.-]{0,63}$/, { error: 'must be one tag key, e.g. host' })
      .nullable()
      .optional()
      .describe(
        "Draws one line per value of this tag key for each stat (at most 50 by volume, the rest as one line), as a stat read's group_by",
      ),
  })
  .strict()

const Cards = z.array(CardInput).max(MAX_CARDS, { error: `a dashboard holds at most ${MAX_CARDS} cards` })

export const CreateDashboardBody = z
  .object({ name: Name, range: Range.optional().describe('The range of the whole dashboard (default 24h)'), cards: Cards.default([]) })
  .strict()
  .meta({ id: 'CreateDashboardBody' })

export const PatchDashboardBody = z
  .object({
    name: Name.optional(),
    range: Range.optional(),
    cards: Cards.optional().describe('The whole list, in order: cards left out are removed'),
  })
  .strict()
  .refine((b) => b.name !== undefined || b.range !== undefined || b.cards !== undefined, {
    error: 'nothing to change: give name, range or cards',
  })
  .meta({ id: 'PatchDashboardBody' })

export const CardJson = z.object({
  id: z.uuid(),
  title: z.string().describe("The card's title, or its stats' names joined"),
  stats: z.array(z.string()),
  range: z.string().nullable().describe("The card's own range, or null when it follows the dashboard's"),
  filter: z.string().nullable().describe('The tag filter (host:web1,region:eu), or null'),
  group_by: z.string().nullable().describe('The tag key drawn one line per value, or null'),
})

export const DashboardJson = z
  .object({
    id: z.uuid(),
    name: z.string(),
    range: z.string(),
    cards: z.array(CardJson),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Dashboard' })

export const DashboardOne = z.object({ dashboard: DashboardJson }).meta({ id: 'DashboardOne' })
export const DashboardList = z.object({ dashboards: z.array(DashboardJson) }).meta({ id: 'DashboardList' })

export const DashboardDataQuery = z.object({
  range: Range.optional().describe('Draw the dashboard over this range instead of its own (cards with a range of their own keep it)'),
})

export const DashboardData = z
  .object({
    dashboard: DashboardJson,
    cards: z.array(
      z.object({
        id: z.uuid(),
        range: RangeJson,
        series: z.array(
          z.object({
            name: z.string(),
            kind: z.enum(['counter', 'gauge']),
            unit: z.string().nullable().describe("The stat's unit: stats of different units read on two axes"),
            tags: z.record(z.string(), z.string()).optional().describe("A group's tag (the card's group_by); absent without group_by"),
            other: z.literal(true).optional().describe('The groups past the top 50, read as one'),
            points: z.array(BucketJson),
          }),
        ),
      }),
    ),
  })
  .meta({ id: 'DashboardData', description: "Every card's window and its stats' buckets, in card order: what the page draws, in one read" })

export type CardInputT = z.infer<typeof CardInput>
export type CreateDashboard = z.infer<typeof CreateDashboardBody>
export type PatchDashboard = z.infer<typeof PatchDashboardBody>
