// Which stats move with this one (docs/decisions.md §12): hourly buckets
// over the window (shared/stats/hourly.ts), first differences by default so
// that shared trends and daily cycles do not make unrelated stats look
// related, then departures (the default: Pearson on robustly standardised
// departures from each hour of the day's usual value, see departures()),
// Spearman (ranks with ties as mid-ranks) or Pearson from simple-statistics,
// and an optional search over lags.
import { quantileRankSorted, sampleCorrelation, sampleRankCorrelation } from 'simple-statistics'
import type { Db } from '../db.js'
import type { Plan } from '../plans.js'
import { HOUR, readHourly } from '../stats/hourly.js'
import { seriesIdsOf } from '../stats/series.js'
import { RANGES, type RangeName } from '../stats/ranges.js'
import { listStats, type Stat, type StatListItem } from '../stats/repo.js'
import type { CORRELATION_METHODS, CorrelationsQuery, EXCLUSION_REASONS } from './schema.js'

/** Fewest overlapping hourly pairs a coefficient may rest on. */
export const MIN_PAIRS = 24
/** Candidates compared per request: the most recently active stats (bounds the work and the answer). */
export const MAX_CANDIDATES = 500

type Series = Array<number | null>
export type Method = (typeof CORRELATION_METHODS)[number]

/** Hours of the window a daily profile needs before it is taken out: three of each hour of the day. */
export const PROFILE_HOURS = 72
/** A departure is capped at this many robust spreads, so that one broken reading cannot decide alone. */
export const DEPARTURE_CAP = 12
/**
 * Departures are raised to this power (sign kept): large ones weigh a little more than in proportion,
 * so one shared spike counts against a fortnight of ordinary hours. Set on the labelled set's seeds
 * 1-10 (bench/correlation-set.ts; 1: 39 of 40 related pairs in their target's top 3; 2: two
 * unrelated pairs at 0.32 and 0.42), checked on seeds 101-120 (1.25: 80 of 80 in the top 3, no
 * unrelated pair above 0.25; 1.5 also 80 of 80 but an unrelated pair at 0.295).
 */
export const DEPARTURE_POWER = 1.25

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * The 'departures' method's view of a series: how far each hour departs from what
 * the stat usually does at that hour. The typical value of each hour of the day (its median over the
 * window, once there are PROFILE_HOURS) is taken out, so two unrelated stats that share a daily
 * cycle do not look related; what is left is divided by its robust spread (1.4826 x the median
 * absolute deviation, or 1.2533 x the mean absolute deviation when most hours do not move), so a
 * shared spike of 8 spreads weighs 8 (more, see DEPARTURE_POWER) where ranks would flatten it to one
 * step. Pearson on these weighs shared departures by their size. NaN where unknown.
 */
export function departures(values: Series): Float64Array {
  const out = new Float64Array(values.length).fill(NaN)
  const known = values.filter((v): v is number => v !== null)
  if (!known.length) return out
  const left = new Float64Array(values.length).fill(NaN)
  if (known.length >= PROFILE_HOURS) {
    const byHour: number[][] = Array.from({ length: 24 }, () => [])
    values.forEach((v, i) => {
      if (v !== null) byHour[i % 24].push(v)
    })
    const typical = byHour.map((xs) => (xs.length ? median(xs) : 0))
    values.forEach((v, i) => {
      if (v !== null) left[i] = v - typical[i % 24]
    })
  } else
    values.forEach((v, i) => {
      if (v !== null) left[i] = v
    })
  const rest = [...left].filter((v) => !Number.isNaN(v))
  const centre = median(rest)
  let spread = 1.4826 * median(rest.map((v) => Math.abs(v - centre)))
  if (!(spread > 0)) spread = (1.2533 * rest.reduce((a, v) => a + Math.abs(v - centre), 0)) / rest.length
  if (!(spread > 0)) return left.map((v) => (Number.isNaN(v) ? NaN : 0)) // constant: no movement to correlate
  for (let i = 0; i < left.length; i++) {
    if (Number.isNaN(left[i])) continue
    const z = Math.max(-DEPARTURE_CAP, Math.min(DEPARTURE_CAP, (left[i] - centre) / spread))
    out[i] = Math.sign(z) * Math.abs(z) ** DEPARTURE_POWER
  }
  return out
}

/** First differences; a difference across an unknown hour is unknown. */
export function diff(values: Series): Series {
  const out: Series = new Array(Math.max(0, values.length - 1))
  for (let i = 1; i < values.length; i++) {
    const a = values[i - 1]
    const b = values[i]
    out[i - 1] = a === null || b === null ? null : b - a
  }
  return out
}

export interface Match {
  coefficient: number
  lag: number
  n: number
}

export type Verdict = Match | { reason: (typeof EXCLUSION_REASONS)[number]; n: number }

/**
 * What the lag screen compares: for Spearman the series' mid-ranks over the
 * whole window (simple-statistics' quantile rank times the count is the
 * 1-based mid-rank), for Pearson the values; NaN where unknown. Kept per
 * series, so the target is prepared once for all candidates.
 */
const prepared: Record<Method, WeakMap<Series, Float64Array>> = {
  spearman: new WeakMap(),
  pearson: new WeakMap(),
  departures: new WeakMap(),
}
function prepare(values: Series, method: Method): Float64Array {
  let out = prepared[method].get(values)
  if (out) return out
  out = new Float64Array(values.length).fill(NaN)
  if (method === 'departures') {
    out = departures(values)
  } else if (method === 'pearson') {
    for (let i = 0; i < values.length; i++) if (values[i] !== null) out[i] = values[i]!
  } else {
    const sorted = Float64Array.from(values.filter((v): v is number => v !== null)).sort() as unknown as number[]
    for (let i = 0; i < values.length; i++) if (values[i] !== null) out[i] = quantileRankSorted(sorted, values[i]!) * sorted.length
  }
  prepared[method].set(values, out)
  return out
}

/** Pearson's r of x[i] against y[i - lag] over the pairs both know, in one pass (the lag screen only). */
function screen(x: Float64Array, y: Float64Array, lag: number): { n: number; r: number } {
  let n = 0,
    sx = 0,
    sy = 0,
    sxx = 0,
    syy = 0,
    sxy = 0
  let x0 = NaN,
    y0 = NaN // shift by the first pair: sums of small numbers lose less precision
  for (let i = Math.max(0, lag); i < x.length && i - lag < y.length; i++) {
    const a = x[i]
    const b = y[i - lag]
    if (Number.isNaN(a) || Number.isNaN(b)) continue
    if (n === 0) {
      x0 = a
      y0 = b
    }
    const u = a - x0
    const v = b - y0
    n++
    sx += u
    sy += v
    sxx += u * u
    syy += v * v
    sxy += u * v
  }
  const den = Math.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))
  return { n, r: den > 0 ? (n * sxy - sx * sy) / den : NaN }
}

/**
 * The best-matching lag of `other` against `target` (series of equal length),
 * trying 0, then ±1, ±2, ... up to `maxLag`: at lag k > 0, target hour i is
 * paired with other hour i - k (the other stat moves first). Only hours both
 * have are paired; a lag needs MIN_PAIRS pairs. The strongest absolute
 * coefficient wins; on a tie the smaller shift. Lags are screened on ranks
 * (or values) taken over the whole window, cheap enough for 49 shifts of
 * 500 stats; the coefficient reported is then computed exactly on the chosen
 * lag's own pairs by simple-statistics (Spearman re-ranks those pairs).
 */
export function bestLag(target: Series, other: Series, method: Method, maxLag: number): Verdict {
  if (!other.some((v) => v !== null)) return { reason: 'no_data', n: 0 }
  const x = prepare(target, method)
  const y = prepare(other, method)
  let best: { r: number; lag: number; n: number } | null = null
  let mostPairs = 0
  for (let step = 0; step <= 2 * maxLag; step++) {
    const lag = step === 0 ? 0 : step % 2 ? (step + 1) / 2 : -step / 2
    const { n, r } = screen(x, y, lag)
    mostPairs = Math.max(mostPairs, n)
    if (n < MIN_PAIRS || !Number.isFinite(r)) continue // too few pairs, or one side constant over them
    if (!best || Math.abs(r) > Math.abs(best.r)) best = { r, lag, n }
  }
  if (!best) return mostPairs < MIN_PAIRS ? { reason: 'short', n: mostPairs } : { reason: 'constant', n: mostPairs }
  const r = exact(target, other, x, y, method, best.lag, best.n)
  return Number.isFinite(r) ? { coefficient: r, lag: best.lag, n: best.n } : { reason: 'constant', n: best.n }
}

/** The coefficient on the pairs of one lag, by simple-statistics. */
function exact(target: Series, other: Series, x: Float64Array, y: Float64Array, method: Method, lag: number, n: number): number {
  if (method === 'departures') {
    // The departures are the values compared: Pearson on the chosen lag's pairs of them.
    const xs: number[] = []
    const ys: number[] = []
    for (let i = Math.max(0, lag); i < x.length && i - lag < y.length; i++) {
      if (!Number.isNaN(x[i]) && !Number.isNaN(y[i - lag])) {
        xs.push(x[i])
        ys.push(y[i - lag])
      }
    }
    return sampleCorrelation(xs, ys)
  }
  // Every known value of both series is paired: ranks over the window are the pairs' own ranks.
  const known = (a: Float64Array) => a.reduce((k, v) => k + (Number.isNaN(v) ? 0 : 1), 0)
  if (lag === 0 && n === target.length && n === other.length && known(x) === n && known(y) === n) {
    return sampleCorrelation(x as unknown as number[], y as unknown as number[])
  }
  const xs: number[] = []
  const ys: number[] = []
  for (let i = Math.max(0, lag); i < target.length && i - lag < other.length; i++) {
    const a = target[i]
    const b = other[i - lag]
    if (a !== null && b !== null) {
      xs.push(a)
      ys.push(b)
    }
  }
  return method === 'spearman' ? sampleRankCorrelation(xs, ys) : sampleCorrelation(xs, ys)
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000

/** The window: complete hours over `range`, starting no earlier than the plan's retention. */
export function correlationWindow(range: RangeName, plan: Pick<Plan, 'retentionDays'>, now: Date) {
  const to = Math.floor(now.getTime() / 1000 / HOUR) * HOUR
  const asked = to - RANGES[range].seconds
  const retained = Math.ceil((now.getTime() / 1000 - plan.retentionDays * 86_400) / HOUR) * HOUR
  return { from: Math.max(asked, retained), to, clamped: retained > asked }
}

/** The whole answer of GET /api/v1/correlations. */
export async function correlations(
  sql: Db,
  accountId: string,
  plan: Pick<Plan, 'retentionDays'>,
  target: Stat,
  q: CorrelationsQuery,
  now: Date,
) {
  const w = correlationWindow(q.range as RangeName, plan, now)
  const others = (await listStats(sql, accountId)).filter((s) => s.id !== target.id)
  // Most recently active first; stats that never had a point last, by name.
  const byActivity = (a: StatListItem, b: StatListItem) =>
    (b.lastPointAt?.getTime() ?? -Infinity) - (a.lastPointAt?.getTime() ?? -Infinity) || a.name.localeCompare(b.name)
  const candidates = others.sort(byActivity).slice(0, MAX_CANDIDATES)
  // Each stat as a whole: all its series read as one (docs/decisions.md §24).
  const series = await seriesIdsOf(sql, [target, ...candidates])
  const hourly = await readHourly(
    sql,
    [target, ...candidates].map((s) => ({ id: s.id, kind: s.kind, since: s.createdAt, series: series.get(s.id) })),
    new Date(w.from * 1000),
    new Date(w.to * 1000),
  )
  const prepare = (id: string) => {
    const values = hourly.get(id)!.values
    return q.transform === 'diff' ? diff(values) : values
  }
  const t = prepare(target.id)
  const targetN = t.reduce<number>((n, v) => n + (v === null ? 0 : 1), 0)

  const omitted: string[] = []
  if (w.clamped)
    omitted.push(
      `the range ${q.range} reaches past the plan's ${plan.retentionDays}-day retention: compared from ${new Date(w.from * 1000).toISOString()} only`,
    )
  if (others.length > candidates.length) {
    omitted.push(
      `compared the ${candidates.length} most recently active of ${others.length} other stats; ${others.length - candidates.length} less recently active stats were left out`,
    )
  }
  const results: Array<{ stat_name: string; kind: Stat['kind']; coefficient: number; lag_buckets: number; n: number }> = []
  const excluded: Array<{ stat_name: string; reason: (typeof EXCLUSION_REASONS)[number]; detail: string }> = []
  const first = t.find((v) => v !== null)
  const targetUsable = targetN >= MIN_PAIRS && t.some((v) => v !== null && v !== first)
  if (!targetUsable) {
    omitted.push(
      targetN < MIN_PAIRS
        ? `${target.name} has only ${targetN} usable hourly values in the window (${MIN_PAIRS} are needed${q.transform === 'diff' ? ', after taking hour-to-hour differences' : ''}): choose a longer range`
        : `${target.name} is constant over the window${q.transform === 'diff' ? ' (or changes by the same amount every hour)' : ''}: there is no movement to correlate with`,
    )
  } else {
    for (const s of candidates) {
      const v = bestLag(t, prepare(s.id), q.method, q.max_lag)
      if ('reason' in v) {
        excluded.push({ stat_name: s.name, reason: v.reason, detail: exclusionDetail(v) })
      } else {
        results.push({ stat_name: s.name, kind: s.kind, coefficient: round4(v.coefficient), lag_buckets: v.lag, n: v.n })
      }
    }
    results.sort((a, b) => Math.abs(b.coefficient) - Math.abs(a.coefficient) || a.stat_name.localeCompare(b.stat_name))
    // Under no relation at all, |r| exceeds about 1.96 / sqrt(n - 1) in 1 case of 20 (any method, large n).
    const chance = round4(1.96 / Math.sqrt(targetN - 1))
    const tried = results.length * (2 * q.max_lag + 1)
    omitted.push(
      'correlation is not causation: a strong coefficient says two stats moved together over this window, not that one drives the other',
    )
    omitted.push(
      `with ${targetN} hourly values, unrelated stats reach |coefficient| > ${chance} in about 1 comparison of 20; ${tried} comparison${tried === 1 ? '' : 's'} were made${q.max_lag ? ' (every lag counts)' : ''}, so roughly ${Math.round(tried / 20)} would pass it by chance alone even if no stat were related`,
    )
  }
  return {
    target: target.name,
    target_kind: target.kind,
    target_n: targetN,
    window: { from: new Date(w.from * 1000).toISOString(), to: new Date(w.to * 1000).toISOString(), bucket_seconds: HOUR as 3600 },
    method: q.method,
    transform: q.transform,
    max_lag: q.max_lag,
    results,
    excluded,
    omitted,
  }
}

function exclusionDetail(v: { reason: (typeof EXCLUSION_REASONS)[number]; n: number }): string {
  switch (v.reason) {
    case 'no_data':
      return 'no data in the window'
    case 'short':
      return `only ${v.n} overlapping hours with the target (${MIN_PAIRS} needed)`
    case 'constant':
      return `no variation over the ${v.n} overlapping hours`
  }
}
