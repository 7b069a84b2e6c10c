// The anomaly detector (docs/decisions.md §I-3.3, §11 and §16): two
// independent baselines over complete hourly buckets, the stat's daily and
// weekly cycle where it has one, and the incident state machine on top. Pure:
// the sweep (shared/anomalies/sweep.ts) and the back-test
// (shared/anomalies/backtest.ts) both step hours through `replay`, so what the
// back-test draws is what the sweep would have said.
//
//   cycle               where the trailing hours show one (autocorrelation of the series less its
//                       centred 24-hour mean, at 24 h for daily, at 168 h over 3 weeks for weekly), the
//                       median offset of each hour of the day (or of the week) from that mean; the
//                       expected value of an hour is the recent level plus its hour's offset, so a
//                       trough is measured against troughs and a peak against peaks.
//   window baseline     level: the median of the trailing 167 hours less their offsets; scale: the
//                       standard deviation of the same (with floors below). Robust centre, plain
//                       spread: measured on NAB's real series, a MAD scale flags their heavy tails every
//                       few hours, a standard deviation that includes past bursts does not; arms at 8
//                       usable hours.
//   streaming baseline  exponentially weighted mean and variance of the hours less their offsets,
//                       persisted per stat, updated once per hour after scoring (clamped to mean +- 3
//                       scales, skipped for hours outside the range); it speaks alone while the window
//                       cannot arm (a new stat, or the hours after a level shift), and once both are armed
//                       it must agree: an hour is flagged only when both see it THRESHOLD of their own
//                       spreads out on the same side. The window's spread is a week's; the weighted one
//                       follows the last day or so, so a noisy stretch that the week has not yet absorbed
//                       is not flagged hour after hour (on NAB this halved the false flags of the AWS and
//                       AdExchange groups at the same recall).
//
// An hour is outside when it is THRESHOLD scales from expected (twice that while fewer than DAILY_MIN_HOURS
// are known: a young stat's daily cycle cannot be told from an anomaly yet; and while the hour's cycle offset rests
// on fewer than SLOT_MIN_SAMPLES days); one such hour opens an incident,
// two inside hours close it. A level shift (LEVEL_SHIFT_HOURS outside on one side, or an incident that closes
// with the stat still beyond the band where it began) is reported once, then both baselines start again from
// the new level. The constants were set on two NAB groups and
// checked on the other two, then the other way round (README "Anomaly detection"; npm run bench:anomalies).
//
// Scale floors (the guard against flagging noise): at least REL_FLOOR of the expected level (a constant
// non-zero gauge is scoreable, a 1 % wobble is not an anomaly), at least SLOT_SPREAD times the spread
// of this hour's own offsets (a cycle whose peaks are noisier than its troughs), and for counters at
// least a Poisson standard deviation and COUNT_FLOOR counts.
import { medianSorted } from 'simple-statistics'
import { HOUR } from '../stats/hourly.js'
import type { Kind } from '../stats/repo.js'
import { explainNoPoints, explainScored, explainUnscored, shiftWords } from './explain.js'

export { HOUR }
/** The trailing window in hours; the detector's baseline is this minus the hour scored. */
export const WINDOW_HOURS = 168
/** Hours a weekly cycle is learned from: three values for every hour of the week. */
export const WEEKLY_HOURS = 3 * 168
/** A stat's weekly cycle is looked for again this long after the last look. */
export const WEEKLY_CHECK_HOURS = 24
/** Hours of history a daily cycle needs: two days. */
export const DAILY_MIN_HOURS = 48
/**
 * Days (weeks, for a weekly cycle) an hour's cycle offset must be the median of before its range is the usual one:
 * the median of two values is their mean, which one noisy day moves, and the spread of so few is often far below
 * the noise (on 200 seeded clean daily cycles with 5 % noise: under half of it at 7 % of day 2's hours, 1 % of day
 * 3's, 0.1 % later; day 2 held all 13 of their false incidents). Until then the range is doubled, as for a stat
 * younger than DAILY_MIN_HOURS.
 */
export const SLOT_MIN_SAMPLES = 3
/** The autocorrelation at the season's lag above which a cycle is used. */
export const CYCLE_ACF = 0.3
export const MIN_SAMPLES = 8
export const ALPHA = 0.1
/** An hour this many scales from expected is outside the normal range. */
export const THRESHOLD = 4
/**
 * How many spreads from expected an hour must be at each sensitivity a stat (or an anomaly alert) can be set to
 * (docs/decisions.md §16): `normal` is THRESHOLD; `low` flags only the larger departures, `high` smaller ones.
 */
export const SENSITIVITIES = ['low', 'normal', 'high'] as const
export type Sensitivity = (typeof SENSITIVITIES)[number]
export const SENSITIVITY_THRESHOLD: Record<Sensitivity, number> = { low: 5, normal: THRESHOLD, high: 3 }
/** Inside hours in a row that close an incident. */
export const CLOSE_AFTER = 2
/**
 * Outside hours in a row on one side that make an incident a level shift (then both baselines re-seed). Two:
 * a stat that moved and stayed is reported once and learned within hours, not flagged for a day (a deploy that
 * adds 50 ms to every request is one incident, not 24 red hours and an alert open all day). A longer outage
 * ends its incident as a level shift too; the new level's own baselines then see the recovery. Two rather than
 * three was chosen on NAB's tuning half (false flags 3.11 to 2.75 per 1,000 h at the same recall; docs/anomalies.md).
 */
export const LEVEL_SHIFT_HOURS = 2
/**
 * An incident of at least this many outside hours that closes with the stat still beyond the band where it
 * began is a level shift too: the window's spread grew with the new level until the new level looked normal.
 */
export const ABSORBED_SHIFT_HOURS = 2
/** Incident hours in the trailing window that are left out of its baselines; more, and none are (see withoutIncidents). */
export const MASKED_MAX = 1
/** Hours after a level shift during which the spread is at least the one before it (a few hours tell little of it). */
export const SETTLE_HOURS = 48
/** The scale is at least this share of the expected level. */
export const REL_FLOOR = 0.01
/** ... and at least this many times the spread (MAD) of the hour's own cycle offsets. */
export const SLOT_SPREAD = 1.25
/** A counter's scale is at least this many counts (an outside hour is then at least 20 counts away). */
export const COUNT_FLOOR = 5
const GAUGE_FLOOR = 1e-9
/**
 * The anomaly-likelihood step (HTM's, research note A1): the mean of the last LIKELIHOOD_SHORT hours' scores against
 * the distribution of the scores of the LIKELIHOOD_LONG before them. 'off': not used; 'gate': an outside hour must
 * also be LIKELIHOOD_C spreads of the scores out; 'or': an hour at least LIKELIHOOD_FLOOR spreads out is outside too
 * when the recent scores are LIKELIHOOD_C of their spread out (a sustained departure below the threshold).
 */
export const LIKELIHOOD = 'off' as 'off' | 'gate' | 'or'
export const LIKELIHOOD_SHORT = 3
export const LIKELIHOOD_LONG = 168
export const LIKELIHOOD_C = 4
export const LIKELIHOOD_FLOOR = 2.5

export type WindowVerdict = 'used' | 'short' | 'no_signal'
export type Direction = 'spike' | 'dip'
export type DetectorName = 'window' | 'streaming' | 'both'
export type Cycle = 'none' | 'daily' | 'weekly'

export interface Streaming {
  n: number
  mean: number
  var: number
  /** Non-zero samples since the last seed: a baseline that only ever saw 0 is not armed. */
  nonzero: number
}

export interface Peak {
  t: number
  observed: number
  expected: number
  lower: number
  upper: number
  score: number
  /** The cycle its range followed: what "usual" means in the incident's summary (absent on incidents stored before it). */
  cycle?: Cycle
}

export interface OpenIncident {
  startedAt: number
  direction: Direction
  detector: DetectorName
  peak: Peak
  explanation: string
  /** Inside hours in a row (closes at CLOSE_AFTER). */
  inside: number
  /** Outside hours in a row on the incident's side since it started (level shift at LEVEL_SHIFT_HOURS). */
  sameSide: number
  /** Outside hours on the incident's side in all. */
  outsideHours?: number
  /** The band where the incident began: a close with the stat still beyond it is a level shift the window absorbed. */
  before?: { lower: number; upper: number }
}

export interface DetectorState {
  /** The last hour stepped (Unix seconds), null before the first. */
  lastHour: number | null
  /** Hours before this one are not part of either baseline (set by a level shift). */
  since: number | null
  /** The spread before the last level shift: the least spread for the SETTLE_HOURS after it, when few hours are known. */
  shiftScale?: number
  streaming: Streaming
  incident: OpenIncident | null
  lastDetectedAt: number | null
  /**
   * Whether the stat has a weekly cycle, and the hour that was last decided: it needs three weeks of
   * history, which the sweep reads only for stats that have one or are due a look (once a day).
   */
  weekly: { on: boolean; checkedAt: number | null }
  /**
   * The hours (Unix seconds) of the last WEEKLY_HOURS that were outside the range as part of an incident: they are
   * left out of the baselines after them (level, spread and cycle; see withoutIncidents), so one spike neither
   * widens the band nor switches the cycle off for the week after it (docs/decisions.md §16, robust baselines). A
   * level shift's hours are the new level and are not kept here.
   */
  masked?: number[]
  /** The scores of the last scored hours, newest last (kept only while the likelihood step is on). */
  scores?: number[]
}

export const initialState = (): DetectorState => ({
  lastHour: null,
  since: null,
  streaming: { n: 0, mean: 0, var: 0, nonzero: 0 },
  incident: null,
  lastDetectedAt: null,
  weekly: { on: false, checkedAt: null },
  masked: [],
})

/** A state read back from storage: fields a state written by an older version lacks take their defaults. */
export const restoreState = (stored: Partial<DetectorState> | null): DetectorState => ({ ...initialState(), ...(stored ?? {}) })

/** What one detector says about one hour. */
export interface Opinion {
  expected: number
  scale: number
  score: number
}

/** The verdict on one hour, as the back-test lists it and the sweep stores it. */
export interface Hour {
  t: number
  observed: number | null
  expected: number | null
  lower: number | null
  upper: number | null
  score: number | null
  detector: DetectorName | null
  cycle: Cycle
  /** Part of an incident and outside the normal range. */
  anomalous: boolean
  window: { verdict: WindowVerdict; samples: number }
  streaming: { samples: number; armed: boolean }
  explanation: string
}

export interface ClosedIncident {
  startedAt: number
  endedAt: number
  direction: Direction
  detector: DetectorName
  levelShift: boolean
  peak: Peak
  explanation: string
}

export interface StepResult {
  state: DetectorState
  hour: Hour
  /** Set when this hour opened an incident (it is then also in state.incident). */
  opened: OpenIncident | null
  closed: ClosedIncident | null
}

/** The hours before the one scored, oldest first: `values[k]` is the hour `from + k * HOUR` (null: a gauge hour without points). */
export interface Trailing {
  values: ReadonlyArray<number | null>
  from: number
}

// ------------------------------------------------------------------ cycles

const sortedOf = (xs: readonly number[]) => Float64Array.from(xs).sort() as unknown as number[]
const median = (xs: readonly number[]) => medianSorted(sortedOf(xs))

function acf(r: ArrayLike<number>, lag: number): number {
  const n = r.length
  if (n <= lag + 2) return 0
  let m = 0
  for (let i = 0; i < n; i++) m += r[i]
  m /= n
  let den = 0
  let num = 0
  for (let i = 0; i < n; i++) den += (r[i] - m) ** 2
  for (let i = lag; i < n; i++) num += (r[i] - m) * (r[i - lag] - m)
  // Each lag's products averaged over its own pairs: a week's lag has a third fewer pairs in three weeks than a day's.
  return den > 0 ? num / (n - lag) / (den / n) : 0
}

/**
 * Each hour less the mean of the 24 hours centred on it, and within 12 hours of either end of the series less the
 * mean of its first or last 24 (unknown where fewer than 12 of those have values): what is left is the shape within
 * a day, without the trend or a level shift. Always a whole day: the mean of the 13 to 23 hours there are at an end
 * is pulled up or down by the cycle itself, which left the newest hours' departures mostly the cycle's phase, and
 * the newest is pooled into the spread of the hour scored next (SLOT_SPREAD). That made a clean daily cycle's
 * spread 4 times its noise's standard deviation on average (1.4 times with whole days), and the range of the hour
 * after an incident narrower than without it (by up to 0.3 of its width), as the incident's hour is left out. `dense` has 0 where `known` is 0 (what the autocorrelation
 * reads): typed arrays, as a replay detrends its week every hour.
 */
function detrended(values: ReadonlyArray<number | null>): { dense: Float64Array; known: Uint8Array } {
  const n = values.length
  const sum = new Float64Array(n + 1)
  const cnt = new Int32Array(n + 1)
  for (let j = 0; j < n; j++) {
    const v = values[j]
    sum[j + 1] = sum[j] + (v ?? 0)
    cnt[j + 1] = cnt[j] + (v === null || v === undefined ? 0 : 1)
  }
  const dense = new Float64Array(n)
  const known = new Uint8Array(n)
  for (let j = 0; j < n; j++) {
    const a = Math.max(0, Math.min(j - 12, n - 24))
    const b = Math.min(n, a + 24)
    const c = cnt[b] - cnt[a]
    const v = values[j]
    if (v !== null && v !== undefined && c >= 12) {
      dense[j] = v - (sum[b] - sum[a]) / c
      known[j] = 1
    }
  }
  return { dense, known }
}

/** A cycle's offset per hour of its period (24 or 168), with the spread about it, pooled over the hour and its two neighbours. */
interface Profile {
  cycle: Exclude<Cycle, 'none'>
  period: number
  offset: Float64Array
  spread: Float64Array
  /** Values each hour's offset was taken from. */
  samples: Int32Array
}

/** `residuals[j]` is hour j's departure, where `known[j]` is 1. */
function profileOf(cycle: Profile['cycle'], period: number, from: number, residuals: ArrayLike<number>, known: Uint8Array): Profile {
  // Each hour of the period's values side by side in one array, in the order they came (their squares are summed in
  // it): a replay builds a profile for every hour it steps, and an array per slot cost a tenth of its CPU.
  const samples = new Int32Array(period)
  const first = slotOf(from, period)
  for (let j = 0, k = first; j < residuals.length; j++, k = k + 1 === period ? 0 : k + 1) samples[k] += known[j]
  const start = new Int32Array(period + 1)
  for (let k = 0; k < period; k++) start[k + 1] = start[k] + samples[k]
  const grouped = new Float64Array(start[period])
  const next = start.slice(0, period)
  for (let j = 0, k = first; j < residuals.length; j++, k = k + 1 === period ? 0 : k + 1) if (known[j]) grouped[next[k]++] = residuals[j]
  const offset = new Float64Array(period)
  const spread = new Float64Array(period)
  const squares = new Float64Array(period)
  const sorted = new Float64Array(Math.max(0, ...samples))
  for (let k = 0; k < period; k++) {
    if (!samples[k]) continue
    offset[k] = medianOfRange(grouped, start[k], start[k + 1], sorted)
    let sq = 0
    for (let i = start[k]; i < start[k + 1]; i++) sq += (grouped[i] - offset[k]) ** 2
    squares[k] = sq
  }
  // An hour's spread is pooled with its neighbours' (each about its own offset): three weeks give an hour of the
  // week only three values, too few to say how noisy it is. A standard deviation with one degree of freedom taken
  // per offset, as the window's spread is one: a median of deviations from a median of three is biased to 0.
  for (let k = 0; k < period; k++) {
    const p = k === 0 ? period - 1 : k - 1
    const q = k + 1 === period ? 0 : k + 1
    const n = samples[p] + samples[k] + samples[q]
    const used = (samples[p] > 0 ? 1 : 0) + (samples[k] > 0 ? 1 : 0) + (samples[q] > 0 ? 1 : 0)
    spread[k] = n - used >= 2 ? Math.sqrt((squares[p] + squares[k] + squares[q]) / (n - used)) : 0
  }
  return { cycle, period, offset, spread, samples }
}

/**
 * The median of xs[from, to), as medianSorted gives it (numpy's linear rule), sorted by insertion into `scratch`:
 * a slot holds a few values, for which a typed array's sort call costs more than the sorting.
 */
function medianOfRange(xs: Float64Array, from: number, to: number, scratch: Float64Array): number {
  const n = to - from
  for (let i = 0; i < n; i++) {
    const x = xs[from + i]
    let j = i - 1
    for (; j >= 0 && scratch[j] > x; j--) scratch[j + 1] = scratch[j]
    scratch[j + 1] = x
  }
  const lower = (n - 1) >> 1
  return n % 2 ? scratch[lower] : scratch[lower] + 0.5 * (scratch[lower + 1] - scratch[lower])
}

/** The hour of the day (period 24) or of the week (168, Monday 00:00 UTC first) of hour t. */
export function slotOf(t: number, period: number): number {
  const h = Math.floor(t / HOUR)
  // 1970-01-01 was a Thursday: shift so that slot 0 of the week is Monday 00:00.
  return period === 168 ? (h + 72) % 168 : h % period
}

/**
 * The daily cycle of the trailing hours, or null where they show none: at least two days of them, and the
 * detrended series correlates with itself a day earlier (above CYCLE_ACF, and clearly more than half a
 * day earlier, which a cycle of 12 hours or plain noise would not).
 */
export function dailyCycle(tr: Trailing): Profile | null {
  if (tr.values.length < DAILY_MIN_HOURS) return null
  const { dense, known } = detrended(tr.values)
  const a24 = acf(dense, 24)
  if (!(a24 > CYCLE_ACF && a24 > acf(dense, 12) + 0.1)) return null
  return profileOf('daily', 24, tr.from, dense, known)
}

/**
 * The weekly cycle of three weeks of trailing hours, or null: the detrended series correlates with itself a
 * week earlier, clearly more than a day earlier. Its offsets are each hour of the week against the three weeks' median, so that a quiet
 * weekend is part of the cycle rather than a dip.
 */
export function weeklyCycle(tr: Trailing): Profile | null {
  if (tr.values.length < WEEKLY_HOURS) return null
  const recent = { values: tr.values.slice(-WEEKLY_HOURS), from: tr.from + (tr.values.length - WEEKLY_HOURS) * HOUR }
  const known = recent.values.filter((v): v is number => v !== null)
  if (known.length < WEEKLY_HOURS / 2) return null
  const { dense } = detrended(recent.values)
  // A daily cycle repeats at 168 hours as well: a weekly one must repeat clearly better there than a day later.
  const a168 = acf(dense, 168)
  if (!(a168 > CYCLE_ACF && a168 > acf(dense, 24) + 0.1)) return null
  const m = median(known)
  return profileOf(
    'weekly',
    168,
    recent.from,
    recent.values.map((v) => (v === null ? 0 : v - m)),
    Uint8Array.from(recent.values, (v) => (v === null ? 0 : 1)),
  )
}

// ------------------------------------------------------------------ baselines

/** Whether a window of usable hours arms the window baseline, and why not. */
export function windowVerdict(usable: readonly number[]): { verdict: WindowVerdict; samples: number } {
  if (usable.length && usable.every((v) => v === 0)) return { verdict: 'no_signal', samples: usable.length }
  return { verdict: usable.length >= MIN_SAMPLES ? 'used' : 'short', samples: usable.length }
}

function floorScale(kind: Kind, expected: number, level: number): number {
  const rel = REL_FLOOR * Math.abs(expected)
  return kind === 'counter' ? Math.max(rel, COUNT_FLOOR, Math.sqrt(Math.max(level, 0))) : Math.max(rel, GAUGE_FLOOR)
}

/** Index in `tr` of the window's first hour: WINDOW_HOURS - 1 before the scored one, and none before `since` (a level shift). */
function windowStart(tr: Trailing, since: number | null): number {
  return Math.max(0, tr.values.length - (WINDOW_HOURS - 1), since === null ? 0 : Math.ceil((since - tr.from) / HOUR))
}

const offsetAt = (p: Profile | null, t: number) => (p ? p.offset[slotOf(t, p.period)] : 0)

/** The window baseline's opinion of hour t's value x, or null when the window does not arm. */
export function windowOpinion(
  kind: Kind,
  tr: Trailing,
  t: number,
  x: number,
  profile: Profile | null = null,
  since: number | null = null,
  minScale = 0,
): Opinion | null {
  const lo = windowStart(tr, since)
  const usable: number[] = []
  const flat: number[] = []
  for (let j = lo; j < tr.values.length; j++) {
    const v = tr.values[j]
    if (v === null || v === undefined) continue
    usable.push(v)
    flat.push(v - offsetAt(profile, tr.from + j * HOUR))
  }
  if (windowVerdict(usable).verdict !== 'used') return null
  const expected = median(flat) + offsetAt(profile, t)
  // The plain standard deviation, bursts included: clipping the window's largest hours before it (winsorising 1, 2
  // or 4 hours) raised the false flags on both halves of NAB by a fifth to three quarters; a burst widening the
  // range for the week after it is what keeps its repeats from being flagged again.
  let sum = 0
  let sq = 0
  for (const v of flat) {
    sum += v
    sq += v * v
  }
  const mean = sum / flat.length
  const sd = Math.sqrt(Math.max(0, sq / flat.length - mean * mean))
  const slotSpread = profile ? SLOT_SPREAD * profile.spread[slotOf(t, profile.period)] : 0
  const scale = Math.max(sd, slotSpread, minScale, floorScale(kind, expected, Math.max(expected, mean)))
  return { expected, scale, score: (x - expected) / scale }
}

export function streamingArmed(s: Streaming): boolean {
  return s.n >= MIN_SAMPLES && s.nonzero > 0
}

function streamingScale(kind: Kind, s: Streaming): number {
  return Math.max(Math.sqrt(Math.max(s.var, 0)), floorScale(kind, s.mean, s.mean))
}

/** The streaming baseline's opinion of x, whose hour's cycle offset is `offset` (the baseline learns hours less theirs). */
export function streamingOpinion(kind: Kind, s: Streaming, x: number, offset = 0): Opinion | null {
  if (!streamingArmed(s)) return null
  const scale = streamingScale(kind, s)
  const expected = s.mean + offset
  return { expected, scale, score: (x - expected) / scale }
}

/**
 * One exponentially weighted update (Finch 2009). The first samples use 1/n as
 * the weight (a plain running mean), and once armed the sample is clamped to
 * mean +- 3 scales, so a spike moves the baseline by at most that much.
 */
export function updateStreaming(kind: Kind, s: Streaming, x: number): Streaming {
  const n = s.n + 1
  if (s.n === 0) return { n, mean: x, var: 0, nonzero: x !== 0 ? 1 : 0 }
  let v = x
  if (streamingArmed(s)) {
    const lim = 3 * streamingScale(kind, s)
    v = Math.min(s.mean + lim, Math.max(s.mean - lim, x))
  }
  const alpha = Math.max(ALPHA, 1 / n)
  const diff = v - s.mean
  const incr = alpha * diff
  return { n, mean: s.mean + incr, var: (1 - alpha) * (s.var + diff * incr), nonzero: s.nonzero + (x !== 0 ? 1 : 0) }
}

/** A streaming baseline seeded from a run of hours (after a level shift). */
export function seedStreaming(kind: Kind, values: readonly number[]): Streaming {
  let s: Streaming = { n: 0, mean: 0, var: 0, nonzero: 0 }
  for (const v of values) s = updateStreaming(kind, s, v)
  return s
}

// ------------------------------------------------------------------ one hour

/** The cycle that applies to hour t given its trailing hours: weekly where the state says so and three weeks are there, else daily, else none. */
export function cycleOf(state: DetectorState, tr: Trailing): Profile | null {
  return (
    (state.weekly.on ? weeklyCycle(tr) : null) ??
    dailyCycle({ values: tr.values.slice(-(WINDOW_HOURS - 1)), from: tr.from + Math.max(0, tr.values.length - (WINDOW_HOURS - 1)) * HOUR })
  )
}

/**
 * Steps one complete hour t whose value is x (null: a gauge hour without points, which is not scored and
 * changes nothing). `tr` holds the hours before t: WINDOW_HOURS - 1 of them, or WEEKLY_HOURS when the stat
 * has a weekly cycle or is due a look for one; counters with 0 for empty hours. The cycle is learned from all
 * of them (its offsets are measured against the centred daily mean, so a level shift does not disturb it);
 * level and spread only from the hours after `state.since`.
 */
export function stepHour(kind: Kind, state: DetectorState, t: number, trIn: Trailing, x: number | null, threshold = THRESHOLD): StepResult {
  const tr = withoutIncidents(trIn, state.masked)
  const weekly = weeklyLook(state, tr, t)
  const st0: DetectorState = { ...state, weekly }
  // A gauge hour without points is not scored: its cycle (most of a step's cost) is not looked for. A replay of
  // history before a stat began steps hundreds of them per stat.
  const profile = x === null ? null : cycleOf(st0, tr)
  const cycle: Cycle = profile?.cycle ?? 'none'
  const usable = tr.values.slice(windowStart(tr, state.since)).filter((v): v is number => v !== null && v !== undefined)
  const wv = windowVerdict(usable)
  const base: Hour = {
    t,
    observed: x,
    expected: null,
    lower: null,
    upper: null,
    score: null,
    detector: null,
    cycle,
    anomalous: false,
    window: wv,
    streaming: { samples: state.streaming.n, armed: streamingArmed(state.streaming) },
    explanation: '',
  }
  if (x === null) {
    return { state: { ...st0, lastHour: t }, hour: { ...base, explanation: explainNoPoints(t) }, opened: null, closed: null }
  }
  const offset = offsetAt(profile, t)
  const settling = state.since !== null && t - state.since < SETTLE_HOURS * HOUR ? (state.shiftScale ?? 0) : 0
  const w = windowOpinion(kind, tr, t, x, profile, state.since, settling)
  const s = streamingOpinion(kind, state.streaming, x, offset)
  // The window's range is the one drawn when it arms (it knows the cycle's shape and the spread); the streaming
  // baseline covers the hours it cannot, and where both are armed an hour is outside only if the streaming one agrees.
  const pick = w ?? s
  const agrees = !!s && Math.sign(s.score) === Math.sign(pick?.score ?? 0) && Math.abs(s.score) >= threshold
  const detector: DetectorName | null = w ? (agrees ? 'both' : 'window') : s ? 'streaming' : null
  const next: DetectorState = { ...st0, lastHour: t, streaming: updateStreaming(kind, state.streaming, x - offset) }
  if (!pick || !detector) {
    return {
      state: next,
      hour: { ...base, explanation: explainUnscored(kind, t, x, wv, state.streaming.n, MIN_SAMPLES) },
      opened: null,
      closed: null,
    }
  }
  const { k, young, lower, upper } = rangeOf(kind, pick, wv.samples, x, usable, threshold, profile, t)
  const score = pick.score
  let outside = Math.abs(score) >= k && (detector !== 'window' || !s)
  if (LIKELIHOOD !== 'off') {
    const hist = state.scores ?? []
    const zl = likelihoodScore(hist, score)
    const sameSide = Math.sign(zl) === Math.sign(score) && Math.abs(zl) >= LIKELIHOOD_C
    if (LIKELIHOOD === 'gate') outside = outside && sameSide
    else if (!outside && sameSide && Math.abs(score) >= LIKELIHOOD_FLOOR && (!s || Math.sign(s.score) === Math.sign(score))) outside = true
    next.scores = [...hist, score].slice(-(LIKELIHOOD_LONG + LIKELIHOOD_SHORT))
  }
  // An hour outside the range does not teach the streaming baseline (its variance would grow with every clamped
  // outlier until a level shift looked normal within hours); a lasting change is learned by the level-shift re-seed.
  if (outside) next.streaming = state.streaming
  // The explanation is written when an incident needs it (an outside hour) and otherwise only when read (the sweep
  // reads its last hour's): most hours of a replay are never explained, and the words cost as much as the scoring.
  const explain = () =>
    explainScored({
      kind,
      t,
      x,
      cycle,
      detector,
      expected: pick.expected,
      scale: pick.scale,
      score,
      lower,
      upper,
      k,
      threshold,
      young,
      outside,
      overruledBy: !outside && Math.abs(score) >= k && s ? s.expected : null,
      windowSamples: wv.samples,
      streamingSamples: state.streaming.n,
    })
  const explanation = outside ? explain() : ''
  const peak: Peak = { t, observed: x, expected: pick.expected, lower, upper, score, cycle }
  const { opened, closed, anomalous } = trackIncident(kind, state.incident, next, peak, { k, tr, outside, detector, explanation })
  next.masked = maskedAfter(state.masked, t, anomalous)
  // A level shift's hours are the new level: its baselines start from them (`since`), so they are not left out.
  if (closed?.levelShift) next.masked = next.masked.filter((h) => h < closed.startedAt)
  if (outside)
    return {
      state: next,
      hour: { ...base, expected: pick.expected, lower, upper, score, detector, anomalous, explanation },
      opened,
      closed,
    }
  // Written when read (a getter in the literal, an own enumerable property like any other): one literal rather than
  // a copy of `base` and a property defined on it, as most of a replay's hours are this one.
  let text: string | undefined
  const hour: Hour = {
    t,
    observed: x,
    expected: pick.expected,
    lower,
    upper,
    score,
    detector,
    cycle,
    anomalous,
    window: wv,
    streaming: base.streaming,
    get explanation() {
      text ??= explain()
      return text
    },
  }
  return { state: next, hour, opened, closed }
}

/** How far the mean of the last LIKELIHOOD_SHORT scores (this one's included) lies from the earlier scores', in their spreads. */
function likelihoodScore(hist: readonly number[], score: number): number {
  const short = [...hist.slice(-(LIKELIHOOD_SHORT - 1)), score]
  const long = hist.slice(0, Math.max(0, hist.length - (LIKELIHOOD_SHORT - 1)))
  if (long.length < MIN_SAMPLES) return 0
  let m = 0
  for (const x of long) m += x
  m /= long.length
  let v = 0
  for (const x of long) v += (x - m) ** 2
  const sd = Math.sqrt(v / long.length)
  const sm = short.reduce((a, b) => a + b, 0) / short.length
  return sd > 0 ? (sm - m) / sd : 0
}

/**
 * The range an hour is judged against: k spreads either side of expected, k being THRESHOLD, or twice it while
 * fewer than DAILY_MIN_HOURS known hours cannot tell a daily cycle from an anomaly, or while the hour's cycle offset
 * rests on fewer than SLOT_MIN_SAMPLES days (or weeks); `young` says which, for the explanation.
 */
function rangeOf(
  kind: Kind,
  pick: Opinion,
  samples: number,
  x: number,
  usable: readonly number[],
  threshold: number,
  profile: Profile | null,
  t: number,
): { k: number; young: string | null; lower: number; upper: number } {
  const young =
    samples < DAILY_MIN_HOURS
      ? `fewer than ${DAILY_MIN_HOURS} hours are known`
      : profile && profile.samples[slotOf(t, profile.period)] < SLOT_MIN_SAMPLES
        ? `this hour of its ${profile.cycle} cycle is known from fewer than ${SLOT_MIN_SAMPLES} ${profile.cycle === 'daily' ? 'days' : 'weeks'}`
        : null
  const k = young ? 2 * threshold : threshold
  const lowerRaw = pick.expected - k * pick.scale
  // A range that dips below 0 reads wrong for a stat that never went there ("usually -212 to 312" for a queue depth).
  const lower = kind === 'counter' || (x >= 0 && usable.every((v) => v >= 0)) ? Math.max(0, lowerRaw) : lowerRaw
  return { k, young, lower, upper: pick.expected + k * pick.scale }
}

/**
 * The incident state machine for one scored hour: an outside hour opens an incident or extends the open one
 * (LEVEL_SHIFT_HOURS on one side close it as a level shift); CLOSE_AFTER inside hours close it (a level shift
 * when the stat stayed beyond the band where it began). Sets `next`'s incident, since, streaming and
 * lastDetectedAt; the hour is anomalous when it is outside and part of an incident.
 */
function trackIncident(
  kind: Kind,
  inc: OpenIncident | null,
  next: DetectorState,
  peak: Peak,
  h: { k: number; tr: Trailing; outside: boolean; detector: DetectorName; explanation: string },
): { opened: OpenIncident | null; closed: ClosedIncident | null; anomalous: boolean } {
  const { t, observed: x, score } = peak
  const direction: Direction = score >= 0 ? 'spike' : 'dip'
  let opened: OpenIncident | null = null
  let closed: ClosedIncident | null = null
  let anomalous = false
  const { k, tr, outside, detector, explanation } = h
  if (inc) {
    if (outside) {
      const sameSide = direction === inc.direction ? inc.sameSide + 1 : 0
      const better = Math.abs(score) > Math.abs(inc.peak.score)
      const updated: OpenIncident = {
        ...inc,
        inside: 0,
        sameSide,
        outsideHours: (inc.outsideHours ?? 1) + (direction === inc.direction ? 1 : 0),
        ...(better ? { peak, explanation } : {}),
      }
      anomalous = true
      next.lastDetectedAt = t
      if (sameSide >= LEVEL_SHIFT_HOURS) {
        // A level shift: reported once, closed, and both baselines start again from the new level.
        closed = {
          startedAt: inc.startedAt,
          endedAt: t + HOUR,
          direction: inc.direction,
          detector: inc.detector,
          levelShift: true,
          peak: updated.peak,
          explanation: `${updated.explanation}; ${shiftWords(inc.direction, inc.before, sameSide)}`,
        }
        next.incident = null
        next.since = t - (sameSide - 1) * HOUR
        next.streaming = seedStreaming(kind, [])
      } else next.incident = updated
    } else {
      const inside = inc.inside + 1
      if (inside >= CLOSE_AFTER) {
        // It ended where the first of the inside hours began; if those hours are still beyond the band where it began,
        // the stat moved to a new level and stayed: a level shift, and both baselines start again from where it began.
        const closing = [...tr.values.slice(-(inside - 1)), x]
        const beyond = (v: number | null) =>
          v !== null && inc.before !== undefined && (inc.direction === 'spike' ? v > inc.before.upper : v < inc.before.lower)
        const shifted = (inc.outsideHours ?? 1) >= ABSORBED_SHIFT_HOURS && closing.every(beyond)
        closed = {
          startedAt: inc.startedAt,
          endedAt: t - (inside - 1) * HOUR,
          direction: inc.direction,
          detector: inc.detector,
          levelShift: shifted,
          peak: inc.peak,
          explanation: shifted
            ? `${inc.explanation}; ${shiftWords(inc.direction, inc.before, (t + HOUR - inc.startedAt) / HOUR)}`
            : inc.explanation,
        }
        next.incident = null
        if (shifted) {
          next.since = inc.startedAt
          next.shiftScale = (inc.before!.upper - inc.before!.lower) / (2 * k)
          next.streaming = seedStreaming(kind, [])
        }
      } else next.incident = { ...inc, inside, sameSide: 0 }
    }
  } else if (outside) {
    opened = {
      startedAt: t,
      direction,
      detector,
      peak,
      explanation,
      inside: 0,
      sameSide: 1,
      outsideHours: 1,
      before: { lower: peak.lower, upper: peak.upper },
    }
    next.incident = opened
    next.lastDetectedAt = t
    anomalous = true
  }
  return { opened, closed, anomalous }
}

/**
 * The trailing hours with an incident's outside hour as unknown (null): what the baselines learn from. Only while
 * the window holds at most MASKED_MAX such hours: a stat that bursts again and again within a week has bursts as
 * part of its spread (leaving every incident hour out doubled the false flags on NAB's tuning half, 2.87 to 7.19
 * per 1,000 h; leaving out one cost 3.11).
 */
export function withoutIncidents(tr: Trailing, masked: readonly number[] | undefined): Trailing {
  if (!masked?.length) return tr
  const end = tr.from + tr.values.length * HOUR
  const inWindow = masked.filter((h) => h >= end - (WINDOW_HOURS - 1) * HOUR && h < end).length
  if (inWindow > MASKED_MAX) return tr
  let values: Array<number | null> | null = null
  for (const h of masked) {
    if (h < tr.from || h >= end) continue
    values ??= tr.values.slice()
    values[(h - tr.from) / HOUR] = null
  }
  return values ? { values, from: tr.from } : tr
}

/** The masked hours still within reach of a baseline at hour t, plus t when it was an anomalous hour. */
function maskedAfter(masked: readonly number[] | undefined, t: number, anomalous: boolean): number[] {
  const keep = (masked ?? []).filter((h) => h > t - WEEKLY_HOURS * HOUR)
  if (anomalous) keep.push(t)
  return keep
}

/** The weekly decision for hour t: looked at again once a day, when three weeks of history are at hand. */
function weeklyLook(state: DetectorState, tr: Trailing, t: number): DetectorState['weekly'] {
  const w = state.weekly ?? { on: false, checkedAt: null }
  if (!lookDue(w, t)) return w
  if (tr.values.length < WEEKLY_HOURS) return w.on ? { on: false, checkedAt: t } : w
  return { on: weeklyCycle(tr) !== null, checkedAt: t }
}

/** Whether the sweep should read three weeks for a stat in this state before scoring hour t. */
export function needsWeeks(state: DetectorState | null, t: number): boolean {
  const w = state?.weekly
  return !w || w.on || lookDue(w, t)
}

/** Whether the weekly cycle is due another look at hour t (never looked, or a day since the last look). */
const lookDue = (w: DetectorState['weekly'], t: number) => w.checkedAt === null || t - w.checkedAt >= WEEKLY_CHECK_HOURS * HOUR

/** The trailing hours of hour index i of a dense series starting at `from`: up to `hours` hours before it. */
export function trailingOf(values: ReadonlyArray<number | null>, from: number, i: number, hours = WEEKLY_HOURS): Trailing {
  const lo = Math.max(0, i - hours)
  return { values: values.slice(lo, Math.max(lo, i)), from: from + lo * HOUR }
}

/** The window baseline's input for hour index i: the known values of the WINDOW_HOURS - 1 hours before it, after `since`. */
export function usableBefore(values: ReadonlyArray<number | null>, from: number, i: number, since: number | null): number[] {
  const tr = trailingOf(values, from, i, WINDOW_HOURS - 1)
  return tr.values.slice(windowStart(tr, since)).filter((v): v is number => v !== null && v !== undefined)
}

/**
 * Re-seeds the streaming baseline after a level shift from the hours since the
 * shift began (the step leaves it empty; the caller has the values).
 */
export function reseedAfterShift(
  kind: Kind,
  state: DetectorState,
  values: ReadonlyArray<number | null>,
  from: number,
  i: number,
): DetectorState {
  if (state.since === null) return state
  const lo = Math.max(0, Math.ceil((state.since - from) / HOUR))
  const run: number[] = []
  for (let j = lo; j <= i; j++) if (values[j] !== null && values[j] !== undefined) run.push(values[j]!)
  return { ...state, streaming: seedStreaming(kind, run) }
}

/**
 * Warms a fresh state over history without scoring it: the streaming baseline
 * learns the hours [from index lo, hi), so the first scored hour has a warm
 * baseline (the sweep's first evaluation of a stat, and the back-test's lead-in).
 */
export function warm(
  kind: Kind,
  state: DetectorState,
  values: ReadonlyArray<number | null>,
  from: number,
  lo: number,
  hi: number,
): DetectorState {
  let streaming = state.streaming
  const profile = hi > 0 ? cycleOf(state, trailingOf(values, from, hi)) : null
  for (let j = Math.max(0, lo); j < hi; j++) {
    const v = values[j]
    if (v !== null && v !== undefined) streaming = updateStreaming(kind, streaming, v - offsetAt(profile, from + j * HOUR))
  }
  return { ...state, streaming, lastHour: hi > lo ? from + (hi - 1) * HOUR : state.lastHour }
}

/**
 * An hour without a value when no hour before it has one (a replay reaching back before a stat began): only the
 * weekly look's clock moves, as in stepHour (three weeks of nothing show no weekly cycle). Much cheaper than stepping
 * it: a replay of 30 days for a stat a week old steps three weeks of such hours.
 */
function stepBeforeFirst(state: DetectorState, t: number, trailing: number): DetectorState {
  const w = state.weekly ?? { on: false, checkedAt: null }
  const weekly = !lookDue(w, t) ? w : trailing < WEEKLY_HOURS ? (w.on ? { on: false, checkedAt: t } : w) : { on: false, checkedAt: t }
  return { ...state, weekly, lastHour: t }
}

function emptyHour(state: DetectorState, t: number): Hour {
  // Explained when read: a first sight's replay steps hundreds of these per stat, and the words cost more than the step.
  let text: string | undefined
  return {
    t,
    observed: null,
    expected: null,
    lower: null,
    upper: null,
    score: null,
    detector: null,
    cycle: 'none',
    anomalous: false,
    window: { verdict: 'short', samples: 0 },
    streaming: { samples: state.streaming.n, armed: streamingArmed(state.streaming) },
    get explanation() {
      text ??= explainNoPoints(t)
      return text
    },
  }
}

/**
 * Steps every hour of a dense series from index `lo` to the end: the one loop
 * the sweep and the back-test share. Returns the verdicts and the incidents
 * opened and closed on the way, in order.
 */
export function replay(
  kind: Kind,
  state: DetectorState,
  values: ReadonlyArray<number | null>,
  from: number,
  lo: number,
  threshold = THRESHOLD,
): { state: DetectorState; hours: Hour[]; events: Array<{ opened?: OpenIncident; closed?: ClosedIncident; hour: Hour }> } {
  const hours: Hour[] = []
  const events: Array<{ opened?: OpenIncident; closed?: ClosedIncident; hour: Hour }> = []
  let st = state
  const first = values.findIndex((v) => v !== null && v !== undefined)
  for (let i = Math.max(0, lo); i < values.length; i++) {
    const t = from + i * HOUR
    if (first < 0 || i < first) {
      // Before the stat's first value: what stepHour would say of an empty hour with nothing known before it.
      st = stepBeforeFirst(st, t, i - Math.max(0, i - WEEKLY_HOURS))
      hours.push(emptyHour(st, t))
      continue
    }
    // The window's hours, or three weeks where the weekly cycle is on or due a look: what the sweep reads for the stat.
    const r = stepHour(kind, st, t, trailingOf(values, from, i, needsWeeks(st, t) ? WEEKLY_HOURS : WINDOW_HOURS - 1), values[i], threshold)
    st = r.state
    if (r.closed?.levelShift) st = reseedAfterShift(kind, st, values, from, i)
    hours.push(r.hour)
    if (r.opened || r.closed)
      events.push({ ...(r.opened ? { opened: r.opened } : {}), ...(r.closed ? { closed: r.closed } : {}), hour: r.hour })
  }
  return { state: st, hours, events }
}
