// Threshold suggestions with a back-test (docs/decisions.md §12): candidate
// thresholds from quantiles of the per-minute value the live evaluation
// checks, each replayed minute by minute through the live evaluation's own
// condition check and state machine (shared/alerts/conditions.ts), so the
// counts are what the alert would really have sent.
import { quantileRankSorted, quantileSorted } from 'simple-statistics'
import { conditionHolds, step, type AlertState, type Rule } from '../alerts/conditions.js'
import type { Db } from '../db.js'
import type { Kind, Stat } from '../stats/repo.js'
import { rollupArrays } from '../stats/hourly.js'
import { slidingPercentiles } from '../stats/percentiles.js'
import { seriesIdsOf } from '../stats/series.js'
import { percentileOf, type Aggregation } from '../alerts/schema.js'

export const MINUTE = 60
const DAY = 86_400

/** One value per minute from `from`: what the live evaluation sees at the end of that minute. */
export interface MinuteSeries {
  /** Unix seconds of the first minute (aligned). */
  from: number
  values: Array<number | null>
}

/**
 * The minute values of a stat over [from, to) (both aligned down to the minute),
 * from the 1 m rollups (plus the pending tail): counters summed, gauges
 * averaged, exactly the live evaluation's "value over the last minute" taken
 * at the minute's end (shared/alerts/evaluate.ts reads [now - 60 s, now), the
 * same half-open minute as a rollup bucket). Minutes without points behave as
 * they do live: a counter's is 0, a gauge's has no value (null), and before
 * the stat existed (its creation, or an earlier backfilled point) there is no
 * value either, as live there was no stat to read.
 */
export async function readMinutes(sql: Db, stat: Pick<Stat, 'id' | 'kind' | 'createdAt'>, from: Date, to: Date): Promise<MinuteSeries> {
  const f = Math.floor(from.getTime() / 1000 / MINUTE) * MINUTE
  const t = Math.floor(to.getTime() / 1000 / MINUTE) * MINUTE
  const slots = Math.max(0, (t - f) / MINUTE)
  const values: Array<number | null> = new Array(slots).fill(null)
  // The chart read's 1 m buckets as arrays (one row, not 43,200 bucket objects for a month).
  // The stat as a whole: all its series read as one (docs/decisions.md §24).
  const ids = slots ? (await seriesIdsOf(sql, [stat])).get(stat.id)! : []
  const [r] = slots ? await rollupArrays(sql, ids, f, t, MINUTE, ids.length > 1 ? ids.map(() => stat.id) : undefined) : []
  let first = Infinity
  if (r) {
    for (let k = 0; k < r.h.length; k++) {
      const i = r.h[k]
      values[i] = stat.kind === 'counter' ? r.sum[k] : r.sum[k] / r.n[k]
      if (i < first) first = i
    }
  }
  if (stat.kind === 'counter') {
    const created = (Math.floor(stat.createdAt.getTime() / 1000 / MINUTE) * MINUTE - f) / MINUTE
    for (let i = Math.max(0, Math.min(first, created)); i < values.length; i++) values[i] ??= 0
  }
  return { from: f, values }
}

/**
 * The minute values a percentile alert (aggregation p50...p99, a gauge) sees over [from, to): at the end of each
 * minute, the percentile of the points of the `windowMinutes` before it, from the stats' percentile reader
 * (shared/stats/percentiles.ts), within 1 % of the live value; null where that window holds no point.
 */
export async function readPercentileMinutes(
  sql: Db,
  stat: Pick<Stat, 'id'>,
  from: Date,
  to: Date,
  windowMinutes: number,
  aggregation: Exclude<Aggregation, 'avg'>,
): Promise<MinuteSeries> {
  const f = Math.floor(from.getTime() / 1000 / MINUTE) * MINUTE
  const t = Math.floor(to.getTime() / 1000 / MINUTE) * MINUTE
  const ids = (await seriesIdsOf(sql, [stat])).get(stat.id)!
  const values = await slidingPercentiles(sql, ids, f, Math.max(0, (t - f) / MINUTE), windowMinutes, {
    key: aggregation,
    q: percentileOf(aggregation),
  })
  return { from: f, values }
}

export interface Incident {
  startedAt: Date
  endedAt: Date | null
  notified: boolean
  peak: number
}

export interface Backtest {
  /** Deliveries with event `fired`. */
  fired: number
  /** Moves into breach whose fire the cooldown suppressed. */
  suppressed: number
  /** Minutes in which the condition held. */
  minutesInBreach: number
  /** The first `keep` incidents. */
  incidents: Incident[]
}

/**
 * Replays an alert over a minute series: one evaluation at the end of each
 * minute, through the same conditionHolds() and step() the alert worker runs,
 * from the state a new alert starts in. Minutes with no value leave the state
 * as it is, as they do live.
 */
export function backtest(rule: Rule, series: MinuteSeries, keep = 20): Backtest {
  let state: AlertState = { state: 'ok', incidentId: null, incidentNotified: false, lastNotifiedAt: null, conditionSince: null }
  const out: Backtest = { fired: 0, suppressed: 0, minutesInBreach: 0, incidents: [] }
  const more = rule.condition === 'below' ? (a: number, b: number) => a < b : (a: number, b: number) => a > b
  let open: Incident | null = null
  const { values } = series
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    const holds = conditionHolds(rule, { value, previous: null })
    const now = new Date((series.from + (i + 1) * MINUTE) * 1000)
    const s = step(rule, state, holds, now)
    if (holds) out.minutesInBreach++
    if (s.next.state === 'firing' && state.state === 'ok') {
      if (s.event === 'fired') out.fired++
      else out.suppressed++
      open = { startedAt: now, endedAt: null, notified: s.event === 'fired', peak: value! }
      if (out.incidents.length < keep) out.incidents.push(open)
    } else if (s.next.state === 'ok' && state.state === 'firing') {
      open!.endedAt = now
      open = null
    } else if (open && value !== null && more(value, open.peak)) {
      open.peak = value
    }
    state = s.next
  }
  return out
}

/** Rounds to two significant figures (a threshold a person would type). */
export function twoSignificant(x: number): number {
  return x === 0 ? 0 : Number(x.toPrecision(2))
}

// The extreme itself (quantile 1 or 0) is no candidate: `above` and `below` are strict, so a threshold equal to
// the largest value would not have fired on it. The highest candidate is the closest round number inside it.
const ABOVE_QUANTILES = [0.95, 0.99, 0.999, 1]
const BELOW_QUANTILES = [0.05, 0.01, 0.001, 0]
/** How many of the most extreme minutes each suggestion is checked against. */
const LARGEST = 3
const MAX_BREACH_SHARE = 0.1

/** The share of the (ascending) minute values strictly beyond a threshold: what `above`/`below` count as breaches. */
function breachShare(sorted: ArrayLike<number>, threshold: number, condition: 'above' | 'below'): number {
  let lo = 0
  let hi = sorted.length
  // The first index whose value is > threshold (above) or >= threshold (below).
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (condition === 'above' ? sorted[mid] <= threshold : sorted[mid] < threshold) lo = mid + 1
    else hi = mid
  }
  return (condition === 'above' ? sorted.length - lo : lo) / sorted.length
}

/**
 * The two-significant-figure number one step inside `extreme` (below it for `above`, above it for `below`):
 * 2,400 -> 2,300 (above), so that a breach as large as the largest one seen is caught.
 */
export function stepInside(extreme: number, condition: 'above' | 'below'): number {
  if (extreme === 0) return condition === 'above' ? -0.01 : 0.01
  const toward = condition === 'above' ? Math.floor : Math.ceil
  const round2 = (x: number) => {
    const unit = 10 ** (Math.floor(Math.log10(Math.abs(x))) - 1)
    return Number((toward(x / unit) * unit).toPrecision(2))
  }
  const rounded = round2(extreme)
  if (rounded !== extreme) return rounded
  // Already round: the next round number inside, from a point a tenth of a step in (1,000 -> 990, 2,400 -> 2,300).
  const unit = 10 ** (Math.floor(Math.log10(Math.abs(extreme))) - 1)
  return round2(extreme + (condition === 'above' ? -unit / 10 : unit / 10))
}

export interface SuggestInput {
  stat: Pick<Stat, 'name' | 'kind' | 'createdAt'>
  series: MinuteSeries
  condition: 'above' | 'below'
  cooldownMinutes: number
  threshold?: number
  /** The lookback asked for, and whether retention shortened it. */
  lookbackDays: number
  clampedToDays: number | null
  /** What the alert compares (default avg, the last minute) and, for a percentile, the window it is taken over. */
  aggregation?: Aggregation
  windowMinutes?: number
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

type Candidate = { threshold: number; quantile: number | null }
type Largest = { at: string; value: number }

/**
 * The thresholds to back-test: the one asked for, or round numbers drawn from the upper (above) or lower (below)
 * quantiles that only rare minutes breach. With a warning when every candidate would fire much of the time.
 */
function candidateThresholds(
  sorted: number[],
  condition: 'above' | 'below',
  asked: number | undefined,
): { candidates: Candidate[]; warnings: string[] } {
  const q = (p: number) => quantileSorted(sorted, p)
  const candidates: Candidate[] = []
  if (asked !== undefined) {
    return {
      candidates: [{ threshold: asked, quantile: sorted.length ? round(quantileRankSorted(sorted, asked), 4) : null }],
      warnings: [],
    }
  }
  if (!sorted.length) return { candidates, warnings: [] }
  const extreme = condition === 'above' ? q(1) : q(0)
  const inside = (t: number) => (condition === 'above' ? t < extreme : t > extreme)
  // A threshold that more than 10 % of the minutes would breach is no alert (it would fire much of the time);
  // 10 %, not 5 %, so that a 95th percentile rounded down to two figures stays a candidate.
  const rare = (t: number) => breachShare(sorted, t, condition) <= MAX_BREACH_SHARE
  for (const p of condition === 'above' ? ABOVE_QUANTILES : BELOW_QUANTILES) {
    const drawn = twoSignificant(q(p))
    const threshold = inside(drawn) ? drawn : stepInside(extreme, condition)
    if (rare(threshold) && !candidates.some((c) => c.threshold === threshold)) candidates.push({ threshold, quantile: p })
  }
  if (candidates.length) return { candidates, warnings: [] }
  return {
    candidates,
    warnings: [
      `the ${condition === 'above' ? 'largest' : 'smallest'} value, ${extreme}, is also a common one: no threshold ${condition === 'above' ? 'under' : 'over'} it would fire only on rare minutes, so none is suggested`,
    ],
  }
}

/**
 * The most extreme minutes of the lookback: what a person saw and expects an alert to catch. Each is named by the
 * minute it covers (its start, as a chart labels it), not by the evaluation at its end: a point at 20:40:30 is in
 * the minute 20:40.
 */
function largestMinutes(series: MinuteSeries, condition: 'above' | 'below'): Largest[] {
  return series.values
    .map((value, i) => ({ at: iso(series.from + i * MINUTE), value }))
    .filter((m): m is Largest => m.value !== null)
    .sort((a, b) => (condition === 'above' ? b.value - a.value : a.value - b.value))
    .slice(0, LARGEST)
}

/** What limits the picture the series gives: a shortened lookback, a stat younger than it, no data, few days, gaps. */
function coverageWarnings(input: SuggestInput, minutesWithValue: number, firstWithValue: number): string[] {
  const { series, stat } = input
  const to = series.from + series.values.length * MINUTE
  const warnings: string[] = []
  if (input.clampedToDays !== null) {
    warnings.push(
      `the lookback of ${input.lookbackDays} days is longer than the plan's retention: back-tested the last ${input.clampedToDays} days`,
    )
  }
  // A stat backfilled with points older than itself has data before its creation: no warning then.
  const created = Math.floor(stat.createdAt.getTime() / 1000)
  if (created > series.from && (firstWithValue < 0 || series.from + firstWithValue * MINUTE >= Math.floor(created / MINUTE) * MINUTE))
    warnings.push(`the stat was created at ${iso(created)}, inside the lookback: the minutes before have no value`)
  if (!minutesWithValue) {
    warnings.push(
      input.threshold === undefined
        ? 'no data in the lookback: nothing to suggest from'
        : 'no data in the lookback: the back-test has nothing to replay',
    )
  } else {
    const days = (to - (series.from + firstWithValue * MINUTE)) / DAY
    if (days < 7)
      warnings.push(`only ${round(days, 1)} days of data in the lookback: a threshold drawn from less than 7 days can miss weekly patterns`)
    // Days of the lookback (24 h each, from its start) on which some minute has a value: gaps make the
    // distribution a partial picture.
    const spanned = Math.ceil((to - series.from) / DAY)
    const withData = new Set(series.values.flatMap((v, i) => (v === null ? [] : [Math.floor((i * MINUTE) / DAY)]))).size
    if (withData < spanned) warnings.push(`${withData} of ${spanned} days have data: the suggestions are drawn from those days only`)
  }
  return warnings
}

/** One candidate replayed over the series: how often it would have fired, and which of the largest minutes it catches. */
function suggestionJson(c: Candidate, rule: Rule, series: MinuteSeries, largest: Largest[]) {
  const b = backtest(rule, series)
  return {
    threshold: c.threshold,
    quantile: c.quantile,
    catches_largest: largest.filter((m) => conditionHolds(rule, { value: m.value, previous: null })).length,
    would_have_fired: b.fired,
    minutes_in_breach: b.minutesInBreach,
    suppressed_by_cooldown: b.suppressed,
    incidents: b.incidents.map((i) => ({
      started_at: i.startedAt.toISOString(),
      ended_at: i.endedAt?.toISOString() ?? null,
      notified: i.notified,
      peak: i.peak,
    })),
  }
}

/** The whole answer of GET /api/v1/thresholds/suggest for a series already read. */
export function suggestThresholds(input: SuggestInput) {
  const { series, condition, cooldownMinutes, stat } = input
  const to = series.from + series.values.length * MINUTE
  const present: number[] = []
  let firstWithValue = -1
  for (let i = 0; i < series.values.length; i++) {
    const v = series.values[i]
    if (v === null) continue
    if (firstWithValue < 0) firstWithValue = i
    present.push(v)
  }
  const sorted = Float64Array.from(present).sort() as unknown as number[]
  const q = (p: number) => (sorted.length ? quantileSorted(sorted, p) : null)
  const rule = (threshold: number): Rule => ({ condition, threshold, windowMinutes: 1, direction: condition, cooldownMinutes })
  const { candidates, warnings } = candidateThresholds(sorted, condition, input.threshold)
  const largest = largestMinutes(series, condition)
  warnings.push(...coverageWarnings(input, sorted.length, firstWithValue))
  const percentile = input.aggregation && input.aggregation !== 'avg' ? input.aggregation : null
  return {
    stat: stat.name,
    kind: stat.kind,
    condition_type: condition,
    aggregation: input.aggregation ?? 'avg',
    ...(percentile ? { window_minutes: input.windowMinutes ?? 5 } : {}),
    cooldown_minutes: cooldownMinutes,
    basis: {
      from: iso(series.from),
      to: iso(to),
      value_definition: percentile ? percentileDefinition(percentile, input.windowMinutes ?? 5) : valueDefinition(stat.kind),
      evaluations: series.values.length,
      minutes_with_value: sorted.length,
    },
    distribution: { min: q(0), p50: q(0.5), p90: q(0.9), p95: q(0.95), p99: q(0.99), max: q(1) },
    largest_minutes: largest,
    suggestions: candidates.map((c) => suggestionJson(c, rule(c.threshold), series, largest)),
    warnings,
  }
}

function valueDefinition(kind: Kind): string {
  return (
    (kind === 'counter'
      ? 'the sum of the counter over each whole UTC minute (0 in a minute without points)'
      : 'the average of the gauge over each whole UTC minute (no value in a minute without points: the alert stays as it is)') +
    ', the value a live alert checks, with one evaluation at the end of each minute; live alerts evaluate every few seconds over a sliding minute, so a burst split across two minutes here can still breach live'
  )
}

function percentileDefinition(aggregation: Aggregation, windowMinutes: number): string {
  return (
    `the ${aggregation} (nearest rank) of the gauge's points over the ${windowMinutes} minutes before the end of each minute, within 1 % ` +
    'of what a live alert with this aggregation and window_minutes compares (exact there under an hour); no value when that window holds no point ' +
    '(the alert stays as it is), with one evaluation at the end of each minute'
  )
}

function round(x: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}
