// Shapes of the anomaly routes (docs/decisions.md §I-4.7, §I-4.8; §11).
import { z } from 'zod'
import { RANGE_NAMES } from '../stats/ranges.js'
import { SENSITIVITIES } from './detector.js'

const Limit = z.coerce
  .number({ error: 'must be an integer from 1 to 100' })
  .int({ error: 'must be an integer from 1 to 100' })
  .min(1, { error: 'must be an integer from 1 to 100' })
  .max(100, { error: 'must be an integer from 1 to 100' })

export const AnomaliesQuery = z.object({
  stat: z.string().optional().describe('Only this stat (by name); unknown: 404'),
  range: z
    .string()
    .optional()
    .describe(`Incidents that overlap this range: one of ${RANGE_NAMES.join(', ')} (default 7d)`),
  status: z.enum(['open', 'closed', 'all'], { error: 'must be open, closed or all' }).optional().describe('Default all'),
  limit: Limit.optional().describe('Default 25, at most 100'),
})

export const BacktestQuery = z.object({
  stat: z.string({ error: 'is required' }).min(1, { error: 'is required' }).describe('The stat to replay (by name)'),
  range: z
    .string()
    .optional()
    .describe(`One of ${RANGE_NAMES.join(', ')} (default 30d), clamped to the plan's retention`),
  sensitivity: z
    .enum(SENSITIVITIES, { error: `must be one of ${SENSITIVITIES.join(', ')}` })
    .optional()
    .describe("low, normal or high (5, 4 or 3 spreads from expected); default the stat's own (PATCH /api/v1/stats/:name)"),
})

export const DiagnosticsQuery = z.object({
  stat: z.string().optional().describe('Only this stat (by name); unknown: 404'),
  limit: Limit.optional().describe('Stats listed: default 25, at most 100'),
})

const Peak = z
  .object({
    t: z.number().int(),
    observed: z.number(),
    expected: z.number(),
    lower: z.number(),
    upper: z.number(),
    score: z.number(),
    cycle: z.enum(['none', 'daily', 'weekly']).optional().describe('The cycle its range followed'),
  })
  .meta({
    id: 'AnomalyPeak',
    description:
      'The hour furthest outside the normal range: its start (t, Unix seconds), value, expected value, normal range and deviations from the expected value.',
  })

export const AnomalyJson = z
  .object({
    id: z.uuid(),
    stat_name: z.string(),
    kind: z.enum(['counter', 'gauge']),
    detector: z.enum(['window', 'streaming', 'both']).describe('The baseline(s) that flagged it: both means both were armed and agreed'),
    direction: z.enum(['spike', 'dip']),
    status: z.enum(['open', 'closed']),
    level_shift: z.boolean().describe('Several hours in a row on one side: reported once, then both baselines re-seed from the new level'),
    started_at: z.iso.datetime(),
    ended_at: z.iso.datetime().nullable(),
    peak: Peak,
    summary: z
      .string()
      .describe('What a person needs: the usual range at that hour (and weekday, for a weekly cycle), what it was, since when'),
    series: z
      .array(
        z.object({
          tags: z.record(z.string(), z.string()).nullable().describe("The series' tags (null: the stat's untagged series)"),
          share: z.number().describe("Its share of the incident's departure, 0 to 1"),
        }),
      )
      .describe(
        'For a stat with tagged series: the series that carry the incident, largest share first (the summary names them: "mostly host:web1"); empty otherwise',
      ),
    explanation: z.string().describe('The statistics behind it: expected value, spread, baselines'),
  })
  .meta({ id: 'Anomaly' })

export const AnomalyList = z.object({ anomalies: z.array(AnomalyJson), omitted: z.array(z.string()) }).meta({ id: 'AnomalyList' })

export const Backtest = z
  .object({
    stat: z.string(),
    kind: z.enum(['counter', 'gauge']),
    sensitivity: z.enum(SENSITIVITIES).describe("The sensitivity replayed at: the one asked for, else the stat's"),
    bucket_seconds: z.literal(3600),
    range: z.object({ requested_range: z.string(), from: z.iso.datetime(), to: z.iso.datetime(), clamped_by_retention: z.boolean() }),
    buckets: z
      .array(
        z.object({
          t: z.number().int(),
          observed: z.number().nullable(),
          expected: z.number().nullable(),
          lower: z.number().nullable(),
          upper: z.number().nullable(),
          score: z.number().nullable(),
          anomalous: z.boolean(),
        }),
      )
      .describe(
        'One per complete hour; expected, lower, upper and score are null where no baseline was armed; observed is null for a gauge hour without points',
      ),
    incidents: z.array(
      z.object({
        started_at: z.iso.datetime(),
        ended_at: z.iso.datetime().nullable(),
        direction: z.enum(['spike', 'dip']),
        level_shift: z.boolean(),
        peak: Peak,
      }),
    ),
  })
  .meta({ id: 'AnomalyBacktest' })

const StatDiagnostics = z.object({
  stat_name: z.string(),
  state: z.enum(['never_evaluated', 'evaluated', 'skipped']),
  reason: z.enum(['tier', 'no_rollup', 'stale', 'no_signal', 'short']).nullable(),
  explanation: z.string(),
  can_fire: z.boolean(),
  ever_evaluated: z.boolean(),
  last_evaluated_at: z.iso.datetime().nullable(),
  evaluation_stale: z
    .boolean()
    .nullable()
    .describe(
      'The newest complete hour has waited more than two sweep intervals unscored; null when never evaluated or not detected on this plan',
    ),
  ever_detected: z.boolean(),
  last_detected_at: z.iso.datetime().nullable(),
  streaming_baseline: z.object({ sample_count: z.number().int(), min_samples_required: z.number().int(), armed: z.boolean() }),
  window_baseline: z.object({
    verdict: z.enum(['used', 'short', 'no_signal']).describe('The trailing 168 complete hours now'),
    sample_count: z.number().int(),
    detector_verdict: z
      .enum(['used', 'short', 'no_signal'])
      .describe('The same window minus its newest hour: the baseline that hour is scored against'),
    detector_sample_count: z.number().int(),
  }),
  rollup: z.object({
    present: z.boolean(),
    computed_at: z.iso.datetime().nullable(),
    refreshed_since_last_evaluation: z.boolean().nullable(),
  }),
})

export const Diagnostics = z
  .object({
    account: z.object({
      plan: z.string(),
      anomalies_entitled_by_plan: z.boolean(),
      stats_total: z.number().int(),
      stats_reported: z.number().int(),
      truncated: z.boolean(),
    }),
    evaluator: z.object({
      enabled: z.boolean().describe('A worker has registered the sweep schedule'),
      window: z.string(),
      interval_seconds: z.number().int(),
      interval_source: z.enum(['env', 'timer_unit', 'unknown']),
      stale_after_seconds: z.number().int(),
      last_sweep_at: z.iso.datetime().nullable(),
      last_sweep_touching_account_at: z.iso.datetime().nullable(),
      never_swept_this_account: z.boolean(),
    }),
    counters: z
      .object({
        never_evaluated: z.number().int(),
        evaluated: z.number().int(),
        skipped: z.number().int(),
        skipped_tier: z.number().int(),
        skipped_no_rollup: z.number().int(),
        skipped_stale: z.number().int(),
        window_baseline_used: z.number().int(),
        window_baseline_short: z.number().int(),
        window_baseline_no_signal: z.number().int(),
        can_fire: z.number().int(),
        cannot_fire: z.number().int(),
      })
      .describe('This account only, over all its stats (not only those listed)'),
    stats: z.array(StatDiagnostics),
    omitted: z.array(z.string()),
  })
  .meta({ id: 'AnomalyDiagnostics' })

export type DiagnosticsJson = z.infer<typeof Diagnostics>
export type StatDiagnosticsJson = z.infer<typeof StatDiagnostics>
