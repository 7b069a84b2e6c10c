// What the anomaly routes answer: the incident list, the back-test and the
// diagnostics (docs/decisions.md §I-4.7; §11). Everything is scoped
// to one account.
import type { Account } from '../accounts/repo.js'
import type { Sql } from '../db.js'
import { forbidden, invalid } from '../errors.js'
import { planOf } from '../plans.js'
import { RANGES, resolveWindow, type RangeName } from '../stats/ranges.js'
import type { Kind, Stat } from '../stats/repo.js'
import { replaySeries, LEAD_IN_HOURS } from './backtest.js'
import { summarize } from './explain.js'
import {
  type Sensitivity,
  type Direction,
  HOUR,
  MIN_SAMPLES,
  restoreState,
  streamingArmed,
  usableBefore,
  WINDOW_HOURS,
  windowVerdict,
  type DetectorState,
  type Peak,
  type WindowVerdict,
} from './detector.js'
import type { DiagnosticsJson, StatDiagnosticsJson } from './schema.js'
import { newestCompleteHour, rollupOfWhole, sensitivityOf, SETTLE_SECONDS } from './sweep.js'
import { carriedWords, readWholeHourly, type Carrier } from './whole.js'

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null)
const isoT = (t: number | null) => (t === null ? null : new Date(t * 1000).toISOString())

function rangeOf(name: string | undefined, fallback: RangeName): RangeName {
  const r = name ?? fallback
  if (!Object.hasOwn(RANGES, r)) throw invalid('invalid_range', `invalid range: must be one of ${Object.keys(RANGES).join(', ')}`)
  return r as RangeName
}

// ------------------------------------------------------------------ list

export async function listAnomalies(
  sql: Sql,
  account: Account,
  q: { stat?: Stat; range?: string; status?: 'open' | 'closed' | 'all'; limit?: number },
  now: Date,
) {
  const range = rangeOf(q.range, '7d')
  if (!planOf(account.plan).anomalyDetection) {
    return {
      anomalies: [],
      omitted: [`The ${account.plan} plan does not include anomaly detection (starter, pro and business do), so no anomalies are listed.`],
    }
  }
  const from = new Date(now.getTime() - RANGES[range].seconds * 1000)
  const limit = q.limit ?? 25
  const status = q.status ?? 'all'
  const rows = await sql<
    {
      id: string
      stat_name: string
      kind: Kind
      detector: string
      direction: string
      status: string
      level_shift: boolean
      started_at: Date
      ended_at: Date | null
      peak: Peak
      explanation: string
      series: Carrier[] | null
    }[]
  >`
    select a.id, s.name as stat_name, s.kind, a.detector, a.direction, a.status, a.level_shift, a.started_at, a.ended_at, a.peak, a.explanation,
           a.series
    from anomalies a join stats s on s.id = a.stat_id
    where a.account_id = ${account.id} ${q.stat ? sql`and a.stat_id = ${q.stat.id}` : sql``}
      ${status === 'all' ? sql`` : sql`and a.status = ${status}`}
      and (a.ended_at is null or a.ended_at >= ${from})
    order by a.started_at desc, s.name
    limit ${limit + 1}`
  const omitted = ['Hours are scored once complete (a minute after they end), by the next sweep; the hour in progress is not scored.']
  if (rows.length > limit)
    omitted.push(`More incidents match than the ${limit} listed: raise limit (at most 100), narrow range or status, or ask for one stat.`)
  return {
    anomalies: rows.slice(0, limit).map((r) => ({
      id: r.id,
      stat_name: r.stat_name,
      kind: r.kind,
      detector: r.detector,
      direction: r.direction,
      status: r.status,
      level_shift: r.level_shift,
      started_at: r.started_at.toISOString(),
      ended_at: iso(r.ended_at),
      peak: r.peak,
      summary: [
        summarize(
          {
            peak: r.peak,
            startedAt: r.started_at.getTime() / 1000,
            endedAt: r.ended_at ? r.ended_at.getTime() / 1000 : null,
            levelShift: r.level_shift,
            direction: r.direction as Direction,
          },
          r.explanation,
        ),
        carriedWords(r.series),
      ]
        .filter(Boolean)
        .join('; '),
      series: r.series ?? [],
      explanation: r.explanation,
    })),
    omitted,
  }
}

// ------------------------------------------------------------------ back-test

export async function backtest(
  sql: Sql,
  account: Account,
  stat: Stat,
  rangeName: string | undefined,
  now: Date,
  sensitivityAsked?: Sensitivity,
) {
  const plan = planOf(account.plan)
  if (!plan.anomalyDetection)
    throw forbidden(
      'plan_lacks_anomaly_detection',
      `the ${plan.name} plan does not include anomaly detection; starter, pro and business do`,
    )
  const range = rangeOf(rangeName, '30d')
  const w = resolveWindow({ range }, now)
  const newest = newestCompleteHour(now)
  const retentionStart = now.getTime() / 1000 - plan.retentionDays * 86_400
  const asked = Math.ceil(w.from.getTime() / 1000 / HOUR) * HOUR
  const first = Math.max(asked, Math.ceil(retentionStart / HOUR) * HOUR)
  const from = first - LEAD_IN_HOURS * HOUR
  const series = (
    await readWholeHourly(
      sql,
      [{ id: stat.id, kind: stat.kind, since: stat.createdAt }],
      new Date(from * 1000),
      new Date((newest + HOUR) * 1000),
    )
  ).get(stat.id)!
  const sensitivity = sensitivityAsked ?? (await sensitivityOf(sql, stat.id))
  const r = replaySeries(stat.kind, series.values, series.from, (first - series.from) / HOUR, undefined, sensitivity)
  return {
    stat: stat.name,
    kind: stat.kind,
    sensitivity,
    bucket_seconds: 3600 as const,
    range: { requested_range: range, from: isoT(first)!, to: isoT(newest + HOUR)!, clamped_by_retention: first > asked },
    buckets: r.hours.map((h) => ({
      t: h.t,
      observed: h.observed,
      expected: h.expected,
      lower: h.lower,
      upper: h.upper,
      score: h.score,
      anomalous: h.anomalous,
    })),
    incidents: r.incidents.map((i) => ({
      started_at: isoT(i.startedAt)!,
      ended_at: isoT(i.endedAt),
      direction: i.direction,
      level_shift: i.levelShift,
      peak: i.peak,
    })),
  }
}

// ------------------------------------------------------------------ diagnostics

export interface EvaluatorInfo {
  /** The sweep's job scheduler as registered in Redis by a worker, if any. */
  scheduler: { everyMs: number } | null
  intervalSeconds: number
  staleAfterSeconds: number
}

interface StatRow {
  id: string
  name: string
  kind: Kind
  created_at: Date
  last_hour: Date | null
  evaluated_at: Date | null
  last_detected_at: Date | null
  last_explanation: string | null
  detector: DetectorState | null
  refreshed_at: Date | null
  has_rollup: boolean
  pending: boolean
}

const PAGE = 500

/** Window verdicts of one stat now (the trailing window) and for the detector (that window minus its newest hour). */
function windowVerdicts(values: Array<number | null>, from: number, state: DetectorState) {
  // `values` holds exactly the trailing window; the detector's baseline is every hour of it but the newest.
  const before = usableBefore(values, from, values.length - 1, state.since)
  const det = windowVerdict(before)
  const newestValue = values[values.length - 1]
  const newestUsable =
    newestValue !== null && newestValue !== undefined && (state.since === null || from + (values.length - 1) * HOUR >= state.since)
  const now = windowVerdict(newestUsable ? [...before, newestValue] : before)
  return { now, det }
}

export async function diagnostics(
  sql: Sql,
  account: Account,
  one: Stat | null,
  limit: number,
  ev: EvaluatorInfo,
  now: Date,
): Promise<DiagnosticsJson> {
  const plan = planOf(account.plan)
  const entitled = plan.anomalyDetection
  const newest = newestCompleteHour(now)
  const interval = ev.scheduler ? Math.round(ev.scheduler.everyMs / 1000) : ev.intervalSeconds
  const staleBefore = now.getTime() - ev.staleAfterSeconds * 1000
  // The newest hour should have been scored by the first sweep after it settled; two intervals later it is overdue.
  const overdue = (newest + HOUR + SETTLE_SECONDS + 2 * interval) * 1000 < now.getTime()

  const rows = await sql<StatRow[]>`
    select s.id, s.name, s.kind, s.created_at, st.last_hour, st.evaluated_at, st.last_detected_at, st.last_explanation, st.detector,
           rs.refreshed_at, rs.refreshed_at is not null as has_rollup, rs.pending
    from stats s
    left join anomaly_state st on st.stat_id = s.id
    cross join lateral ${rollupOfWhole(sql, sql`s.id`)} rs
    where s.account_id = ${account.id} and s.parent_id is null ${one ? sql`and s.id = ${one.id}` : sql``}
    order by s.name`
  const counters = {
    never_evaluated: 0,
    evaluated: 0,
    skipped: 0,
    skipped_tier: 0,
    skipped_no_rollup: 0,
    skipped_stale: 0,
    window_baseline_used: 0,
    window_baseline_short: 0,
    window_baseline_no_signal: 0,
    can_fire: 0,
    cannot_fire: 0,
  }
  const stats: StatDiagnosticsJson[] = []
  for (let p = 0; p < rows.length; p += PAGE) {
    const page = rows.slice(p, p + PAGE)
    // The trailing window: WINDOW_HOURS complete hours up to the newest (plus what a level-shift re-seed cut off is skipped by `since`).
    const series = await readWholeHourly(
      sql,
      page.map((r) => ({ id: r.id, kind: r.kind, since: r.created_at })),
      new Date((newest - (WINDOW_HOURS - 1) * HOUR) * 1000),
      new Date((newest + HOUR) * 1000),
    )
    for (const [k, r] of page.entries()) {
      const s = series.get(r.id)!
      const state = restoreState(r.detector)
      const { now: wNow, det } = windowVerdicts(s.values, s.from, state)
      const armedStreaming = streamingArmed(state.streaming)
      const stale = r.has_rollup && r.pending && r.refreshed_at!.getTime() < staleBefore
      const scoreable = det.verdict === 'used' || armedStreaming
      const reason: StatDiagnosticsJson['reason'] = !entitled
        ? 'tier'
        : !r.has_rollup
          ? 'no_rollup'
          : stale
            ? 'stale'
            : scoreable
              ? null
              : (det.verdict as 'short' | 'no_signal')
      const everEvaluated = r.evaluated_at !== null
      const state3: StatDiagnosticsJson['state'] = reason !== null ? 'skipped' : everEvaluated ? 'evaluated' : 'never_evaluated'
      const canFire = reason === null
      counters[state3]++
      if (reason === 'tier' || reason === 'no_rollup' || reason === 'stale') counters[`skipped_${reason}`]++
      counters[`window_baseline_${det.verdict}`]++
      counters[canFire ? 'can_fire' : 'cannot_fire']++
      if (p + k >= limit) continue
      stats.push({
        stat_name: r.name,
        state: state3,
        reason,
        explanation: explain(reason, r, det, state, plan.name, ev.staleAfterSeconds),
        can_fire: canFire,
        ever_evaluated: everEvaluated,
        last_evaluated_at: iso(r.evaluated_at),
        evaluation_stale: !entitled || !everEvaluated ? null : r.last_hour!.getTime() / 1000 < newest && overdue,
        ever_detected: r.last_detected_at !== null,
        last_detected_at: iso(r.last_detected_at),
        streaming_baseline: { sample_count: state.streaming.n, min_samples_required: MIN_SAMPLES, armed: armedStreaming },
        window_baseline: {
          verdict: wNow.verdict,
          sample_count: wNow.samples,
          detector_verdict: det.verdict,
          detector_sample_count: det.samples,
        },
        rollup: {
          present: r.has_rollup,
          computed_at: iso(r.refreshed_at),
          refreshed_since_last_evaluation: r.refreshed_at && r.evaluated_at ? r.refreshed_at > r.evaluated_at : null,
        },
      })
    }
  }

  const [last] = await sql<{ at: Date | null }[]>`select max(finished_at) as at from anomaly_sweeps`
  const [touch] = await sql<{ swept_at: Date }[]>`select swept_at from anomaly_account_sweeps where account_id = ${account.id}`
  const omitted = [
    'Counters cover this account only; fleet-wide totals are not returned.',
    "state and reason are recomputed from the current rows (plan, rollups, hourly history, detector state), not replayed from the last sweep; last_evaluated_at, ever_detected and the streaming baseline come from the sweep's own records.",
    'interval_source is never timer_unit: the sweep is a BullMQ job scheduler, not a timer unit.',
  ]
  if (!ev.scheduler)
    omitted.push(
      "No worker has registered the sweep schedule in Redis: interval_seconds is this API process's setting, and sweeps may not be running.",
    )
  if (!one && rows.length > limit)
    omitted.push(
      `${rows.length - stats.length} stats are not listed (limit ${limit}, at most 100): the counters still cover them; ask for one with stat=.`,
    )
  return {
    account: {
      plan: account.plan,
      anomalies_entitled_by_plan: entitled,
      stats_total: rows.length,
      stats_reported: stats.length,
      truncated: stats.length < rows.length,
    },
    evaluator: {
      enabled: ev.scheduler !== null,
      window: `${WINDOW_HOURS}h`,
      interval_seconds: interval,
      interval_source: ev.scheduler ? 'env' : 'unknown',
      stale_after_seconds: ev.staleAfterSeconds,
      last_sweep_at: iso(last?.at),
      last_sweep_touching_account_at: iso(touch?.swept_at),
      never_swept_this_account: !touch,
    },
    counters,
    stats,
    omitted,
  }
}

function explain(
  reason: StatDiagnosticsJson['reason'],
  r: StatRow,
  det: { verdict: WindowVerdict; samples: number },
  state: DetectorState,
  plan: string,
  staleAfter: number,
): string {
  const streaming = `the streaming baseline has ${state.streaming.n} of ${MIN_SAMPLES} samples${state.streaming.n >= MIN_SAMPLES && !streamingArmed(state.streaming) ? ' but has only seen 0' : ''}`
  switch (reason) {
    case 'tier':
      return `The ${plan} plan does not include anomaly detection (starter, pro and business do); this stat is not scored.`
    case 'no_rollup':
      return 'No hourly rollup has been computed for this stat yet (its points wait for the rollup job), so there is nothing to score.'
    case 'stale':
      return `Points are waiting to be rolled up and the rollup last took points at ${iso(r.refreshed_at)}, more than ${staleAfter} s ago: the sweep does not score a stat whose rollup stopped refreshing.`
    case 'no_signal':
      return `Every one of the ${det.samples} usable hours in the window is 0 (no_signal), and ${streaming}: no baseline is armed.`
    case 'short':
      return `The window has ${det.samples} of ${MIN_SAMPLES} usable hourly buckets (short), and ${streaming}: no baseline is armed.`
    default: {
      const armed = [
        det.verdict === 'used' ? `the window baseline (${det.samples} hours)` : null,
        streamingArmed(state.streaming) ? `the streaming baseline (${state.streaming.n} samples)` : null,
      ]
        .filter(Boolean)
        .join(' and ')
      return r.last_explanation
        ? `Armed: ${armed}. Last scored hour: ${r.last_explanation}`
        : `Armed: ${armed}; no sweep has scored it yet.`
    }
  }
}
