// Request and response shapes of the import routes (docs/decisions.md §9 and §15).
import { z } from 'zod'
import { MAX_IMPORT_BYTES, MAX_IMPORT_POINTS } from './rows.js'

export const ImportQuery = z.object({
  dryRun: z
    .enum(['0', '1', 'true', 'false'], { error: 'must be 1 (preview) or 0' })
    .optional()
    .describe('1: preview what the import would do, writing nothing (200). Omitted or 0: import (202).'),
  kind: z
    .enum(['counter', 'gauge'], { error: 'must be counter or gauge' })
    .optional()
    .describe('Kind of new stats the file does not type (default gauge). Existing stats keep theirs.'),
})

export const ImportUpload = z
  .string()
  .describe(
    `The saved export file itself (any content type but multipart), or multipart/form-data with the file in field "file". ` +
      `At most ${MAX_IMPORT_BYTES.toLocaleString('en-US')} bytes (413 beyond, counted while reading) and ` +
      `${MAX_IMPORT_POINTS.toLocaleString('en-US')} points (400 beyond). Formats, detected from the content: the predecessor's export JSON ` +
      '(an array of {name, timeframe, points: [{time, value}]}, optionally wrapped as {statlist, datasets}, or with capitalised keys), ' +
      "this service's export JSON or CSV, long CSV (header with stat, value, timestamp or time, optional kind) and wide CSV (Time,<stat>,...). " +
      'Times are Unix seconds or ISO 8601 (UTC when no zone is given).',
  )

const LineError = z.object({
  line: z.number().int().describe('1-based line of the file'),
  message: z.string(),
  stat: z.string().optional(),
})
const StatSummary = z.object({
  name: z.string(),
  tags: z
    .record(z.string(), z.string())
    .optional()
    .describe("The series' tags (a CSV tags cell, a JSON point's tags); absent: the stat's untagged series"),
  kind: z.enum(['counter', 'gauge']),
  points: z.number().int().describe('Valid points of this stat in the file'),
  new_stat: z.boolean(),
  points_accepted: z.number().int(),
  points_trimmed: z.number().int(),
  points_duplicate: z.number().int().describe('Already imported (by an earlier import of the same rows): skipped, free'),
  trimmed_by: z.enum(['stat_limit', 'daily_limit', 'free_tier_full']).nullable(),
})
const Totals = {
  format: z.enum(['predecessor_json', 'service_json', 'long_csv', 'wide_csv']),
  points_total: z.number().int().describe('Every point in the file'),
  points_accepted: z.number().int(),
  points_trimmed: z.number().int().describe("Cut by the plan: new stats beyond the stat limit, points beyond the day's allowance"),
  points_duplicate: z.number().int(),
  points_invalid: z.number().int().describe('Points on bad lines'),
  errors_count: z.number().int(),
  stats: z.array(StatSummary),
  errors: z.array(LineError).describe('Bad lines in file order, at most 1,000 listed'),
}

export const ImportPreview = z.object({ dry_run: z.literal(true), ...Totals, warnings: z.array(z.string()) }).meta({ id: 'ImportPreview' })

const ImportRecord = z.object({
  id: z.uuid(),
  status: z.enum(['queued', 'running', 'completed', 'failed']),
  ...Totals,
  points_done: z.number().int().describe('Accepted points processed so far'),
  points_skipped: z.number().int().describe('Accepted points found already stored while persisting (a concurrent import of the same rows)'),
  progress: z.number().int().describe('points_done as a percentage of points_accepted'),
  error: z.string().nullable(),
  created_at: z.iso.datetime(),
  started_at: z.iso.datetime().nullable(),
  finished_at: z.iso.datetime().nullable(),
})
export const ImportJson = z.object({ import: ImportRecord }).meta({ id: 'Import' })
