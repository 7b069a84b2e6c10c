// The anomaly detector (interface 3.3, decisions.md section 11): two
// independent baselines over complete hourly buckets and the incident state
// machine on top of them. Pure: the sweep (shared/anomalies/sweep.ts) and the
// back-test (shared/anomalies/backtest.ts) both step hours through `stepHour`,
// so what the back-test draws is what the sweep would have said.
//
//   window baseline     median and MAD of the trailing complete hours (up to 167: the
//                       168-hour window minus the hour being scored), robust to the
//                       outliers it contains; arms at 8 usable hours.
//   streaming baseline  exponentially weighted mean and variance, persisted per stat,
//                       updated once per hour after scoring, the update clamped to
//                       mean +- 3 scales and skipped for hours outside the normal range,
//                       so that a spike does not poison it; arms at 8.
//
// Scale floors (the guard against flagging noise): the scale a deviation is
// measured in is at least a share of the expected level (a constant non-zero gauge
// is scoreable, and small relative wobbles are not anomalies), at least the
// window's 5-95 % spread (zero-heavy counters, where the MAD is 0), and for
// counters at least a Poisson standard deviation and 4 counts, so that a
// counter with small expected counts needs a large absolute burst to be flagged.
import { medianSorted, quantileSorted } from 'simple-statistics'
import { HOUR } from '../stats/hourly.js'
import type { Kind } from '../stats/repo.js'

export { HOUR }
/** The trailing window in hours; the detector's baseline is this minus the hour scored. */
export const WINDOW_HOURS = 168
export const MIN_SAMPLES = 8
export const ALPHA = 0.1
/** One hour this far out opens an incident. */
export const STRONG = 5
/** Two consecutive hours this far out on the same side open one; hours this far out keep one open. */
export const MODERATE = 3.5
/** Inside hours in a row that close an incident. */
export const CLOSE_AFTER = 2
/** Outside hours in a row on one side that make an incident a level shift (then both baselines re-seed). */
export const LEVEL_SHIFT_HOURS = 6
/** The scale is at least this share of the expected level. */
export const REL_FLOOR = 0.08
/** A counter's scale is at least this many counts (a strong deviation is then at least 20 counts). */
export const COUNT_FLOOR = 4
const GAUGE_FLOOR = 1e-9
/** Robust scale from the MAD under normality. */
const MAD_TO_SD = 1.4826
/** q95 - q05 of a normal distribution, in standard deviations. */
const SPREAD_TO_SD = 3.29

export type WindowVerdict = 'used' | 'short' | 'no_signal'
export type Direction = 'spike' | 'dip'
export type DetectorName = 'window' | 'streaming' | 'both'

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
}

export interface DetectorState {
  /** The last hour stepped (Unix seconds), null before the first. */
  lastHour: number | null
  /** Hours before this one are not part of either baseline (set by a level shift). */
  since: number | null
  streaming: Streaming
  /** The previous scored hour was a moderate deviation in this direction (one more opens an incident). */
  pending: { direction: Direction; hour: Hour } | null
  incident: OpenIncident | null
  lastDetectedAt: number | null
  /**
   * Hours flagged anomalous within the window: left out of the window baseline, so that a
   * baseline does not learn the anomaly it is measuring (a level shift stays outside until
   * it is recognised, and a burst does not widen the range for the week after it).
   */
  flagged: number[]
}

export const initialState = (): DetectorState => ({
  lastHour: null, since: null, streaming: { n: 0, mean: 0, var: 0, nonzero: 0 }, pending: null, incident: null, lastDetectedAt: null, flagged: [],
})

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

/** The window baseline's opinion of `x`, or null when the window does not arm. */
export function windowOpinion(kind: Kind, usable: readonly number[], x: number): Opinion | null {
  if (windowVerdict(usable).verdict !== 'used') return null
  // Typed-array sorts are numeric and several times faster than Array#sort with a comparator (the sweep's hot path).
  const sorted = Float64Array.from(usable).sort() as unknown as number[]
  const expected = medianSorted(sorted)
  const deviations = Float64Array.from(sorted, (v) => Math.abs(v - expected)).sort() as unknown as number[]
  const mad = medianSorted(deviations) * MAD_TO_SD
  const spread = (quantileSorted(sorted, 0.95) - quantileSorted(sorted, 0.05)) / SPREAD_TO_SD
  let sum = 0
  for (const v of usable) sum += v
  const mean = sum / usable.length
  const scale = Math.max(mad, spread, floorScale(kind, expected, Math.max(expected, mean)))
  return { expected, scale, score: (x - expected) / scale }
}

export function streamingArmed(s: Streaming): boolean {
  return s.n >= MIN_SAMPLES && s.nonzero > 0
}

function streamingScale(kind: Kind, s: Streaming): number {
  return Math.max(Math.sqrt(Math.max(s.var, 0)), floorScale(kind, s.mean, s.mean))
}

export function streamingOpinion(kind: Kind, s: Streaming, x: number): Opinion | null {
  if (!streamingArmed(s)) return null
  const scale = streamingScale(kind, s)
  return { expected: s.mean, scale, score: (x - s.mean) / scale }
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

// ------------------------------------------------------------------ explanations

/** Numbers as a person reads them: up to 4 significant digits, no exponent for ordinary magnitudes. */
export function fmt(x: number): string {
  if (x === 0) return '0'
  const a = Math.abs(x)
  if (a >= 1e-3 && a < 1e9) return String(Number(x.toPrecision(4)))
  return x.toPrecision(3)
}

function hourLabel(t: number): string {
  const iso = new Date(t * 1000).toISOString()
  const end = new Date((t + HOUR) * 1000).toISOString()
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}-${end.slice(11, 16)} UTC`
}

function describeBaseline(detector: DetectorName, windowSamples: number, streamingSamples: number): string {
  const w = `median of ${windowSamples} trailing hours`
  const s = `weighted mean of ${streamingSamples} hourly samples`
  return detector === 'window' ? w : detector === 'streaming' ? s : `${w}; ${s} agrees`
}

// ------------------------------------------------------------------ one hour

/**
 * Steps one complete hour. `usable` is the window baseline's input: the values
 * of the hours before `t` inside the window (and after `state.since`), counters
 * with 0 for empty hours, gauges without them. `x` is the hour's value (null:
 * a gauge hour without points, which is not scored and changes nothing).
 */
export function stepHour(kind: Kind, state: DetectorState, t: number, usable: readonly number[], x: number | null): StepResult {
  const wv = windowVerdict(usable)
  const unit = kind === 'counter' ? 'counter sum' : 'gauge mean'
  const base: Hour = {
    t, observed: x, expected: null, lower: null, upper: null, score: null, detector: null, anomalous: false,
    window: wv, streaming: { samples: state.streaming.n, armed: streamingArmed(state.streaming) }, explanation: '',
  }
  if (x === null) {
    return { state: { ...state, lastHour: t }, hour: { ...base, explanation: `${hourLabel(t)}: no points this hour (a gauge is not scored without samples)` }, opened: null, closed: null }
  }
  const w = windowOpinion(kind, usable, x)
  const s = streamingOpinion(kind, state.streaming, x)
  // Both armed: both must agree, and the milder of the two speaks (fewer false flags on noisy history).
  const pick = w && s ? (Math.abs(w.score) <= Math.abs(s.score) ? w : s) : w ?? s
  const detector: DetectorName | null = w && s ? 'both' : w ? 'window' : s ? 'streaming' : null
  const next: DetectorState = {
    ...state, lastHour: t, streaming: updateStreaming(kind, state.streaming, x),
    flagged: (state.flagged ?? []).filter((f) => f > t - WINDOW_HOURS * HOUR),
  }
  if (!pick || !detector) {
    const why = wv.verdict === 'no_signal' ? `every one of the ${wv.samples} hours in the window is 0 (no_signal)` : `the window has ${wv.samples} of ${MIN_SAMPLES} usable hourly buckets (short)`
    return {
      state: next,
      hour: { ...base, explanation: `${hourLabel(t)}: ${fmt(x)} (${unit}) not scored: ${why}, and the streaming baseline has ${state.streaming.n} of ${MIN_SAMPLES} samples${state.streaming.n >= MIN_SAMPLES ? ' but has only seen 0' : ''}` },
      opened: null, closed: null,
    }
  }
  // Two armed baselines that disagree on the side are not an anomaly.
  const agree = !(w && s) || Math.sign(w.score) === Math.sign(s.score)
  const score = pick.score
  const lowerRaw = pick.expected - MODERATE * pick.scale
  const lower = kind === 'counter' ? Math.max(0, lowerRaw) : lowerRaw
  const upper = pick.expected + MODERATE * pick.scale
  const direction: Direction = score >= 0 ? 'spike' : 'dip'
  const outside = agree && Math.abs(score) >= MODERATE
  const strong = outside && Math.abs(score) >= STRONG
  // An hour outside the range does not teach the streaming baseline (its variance would grow with every clamped
  // outlier until a level shift looked normal within hours); a lasting change is learned by the level-shift re-seed.
  if (outside) next.streaming = state.streaming
  const position = outside ? `${fmt(Math.abs(score))} deviations ${score > 0 ? 'above' : 'below'}` : `inside (${fmt(score)} deviations)`
  const explanation = `${hourLabel(t)}: ${fmt(x)} (${unit}) vs expected ${fmt(pick.expected)} (${describeBaseline(detector, wv.samples, state.streaming.n)}); ` +
    `normal range ${fmt(lower)} to ${fmt(upper)} (${MODERATE} x scale ${fmt(pick.scale)}); ${position}`
  const hour: Hour = { ...base, expected: pick.expected, lower, upper, score, detector, explanation }
  const peak: Peak = { t, observed: x, expected: pick.expected, lower, upper, score }

  let opened: OpenIncident | null = null
  let closed: ClosedIncident | null = null
  const inc = state.incident
  if (inc) {
    if (outside) {
      const sameSide = direction === inc.direction ? inc.sameSide + 1 : 0
      const better = Math.abs(score) > Math.abs(inc.peak.score)
      const updated: OpenIncident = { ...inc, inside: 0, sameSide, ...(better ? { peak, explanation } : {}) }
      hour.anomalous = true
      next.lastDetectedAt = t
      next.flagged = [...next.flagged, t]
      if (sameSide >= LEVEL_SHIFT_HOURS) {
        // A level shift: reported once, closed, and both baselines start again from the new level.
        closed = { startedAt: inc.startedAt, endedAt: t + HOUR, direction: inc.direction, detector: inc.detector, levelShift: true, peak: updated.peak, explanation: `${updated.explanation}; level shift: ${sameSide} hours in a row ${inc.direction === 'spike' ? 'above' : 'below'}, baselines re-seeded from the new level` }
        next.incident = null
        next.since = t - (sameSide - 1) * HOUR
        next.streaming = seedStreaming(kind, [])
        next.flagged = []
      } else next.incident = updated
    } else {
      const inside = inc.inside + 1
      if (inside >= CLOSE_AFTER) {
        // It ended where the first of the inside hours began.
        closed = { startedAt: inc.startedAt, endedAt: t - (inside - 1) * HOUR, direction: inc.direction, detector: inc.detector, levelShift: false, peak: inc.peak, explanation: inc.explanation }
        next.incident = null
      } else next.incident = { ...inc, inside, sameSide: 0 }
    }
    next.pending = null
  } else if (strong || (outside && state.pending?.direction === direction)) {
    const first = strong ? null : state.pending!.hour
    const startPeak = first && Math.abs(first.score ?? 0) > Math.abs(score) ? { t: first.t, observed: first.observed!, expected: first.expected!, lower: first.lower!, upper: first.upper!, score: first.score! } : peak
    opened = {
      startedAt: first ? first.t : t, direction, detector, peak: startPeak, explanation: startPeak === peak ? explanation : first!.explanation,
      inside: 0, sameSide: first ? 2 : 1,
    }
    next.incident = opened
    next.pending = null
    next.lastDetectedAt = t
    next.flagged = first ? [...next.flagged, first.t, t] : [...next.flagged, t]
    hour.anomalous = true
  } else {
    next.pending = outside ? { direction, hour } : null
  }
  return { state: next, hour, opened, closed }
}

/**
 * The window baseline's input for hour index i of a dense series starting at `from`: the
 * known values of the hours before it inside the window, after `since`, not `flagged`.
 */
export function usableBefore(values: ReadonlyArray<number | null>, from: number, i: number, since: number | null, flagged: readonly number[] = []): number[] {
  const lo = Math.max(0, i - (WINDOW_HOURS - 1), since === null ? 0 : Math.ceil((since - from) / HOUR))
  const skip = flagged.length ? new Set(flagged.map((t) => (t - from) / HOUR)) : null
  const out: number[] = []
  for (let j = lo; j < i; j++) {
    const v = values[j]
    if (v !== null && v !== undefined && !skip?.has(j)) out.push(v)
  }
  return out
}

/**
 * Re-seeds the streaming baseline after a level shift from the hours since the
 * shift began (the step leaves it empty; the caller has the values).
 */
export function reseedAfterShift(kind: Kind, state: DetectorState, values: ReadonlyArray<number | null>, from: number, i: number): DetectorState {
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
export function warm(kind: Kind, state: DetectorState, values: ReadonlyArray<number | null>, from: number, lo: number, hi: number): DetectorState {
  let streaming = state.streaming
  for (let j = Math.max(0, lo); j < hi; j++) {
    const v = values[j]
    if (v !== null && v !== undefined) streaming = updateStreaming(kind, streaming, v)
  }
  return { ...state, streaming, lastHour: hi > lo ? from + (hi - 1) * HOUR : state.lastHour }
}

/**
 * Steps every hour of a dense series from index `lo` to the end: the one loop
 * the sweep and the back-test share. Returns the verdicts and the incidents
 * opened and closed on the way, in order.
 */
export function replay(kind: Kind, state: DetectorState, values: ReadonlyArray<number | null>, from: number, lo: number): { state: DetectorState; hours: Hour[]; events: Array<{ opened?: OpenIncident; closed?: ClosedIncident; hour: Hour }> } {
  const hours: Hour[] = []
  const events: Array<{ opened?: OpenIncident; closed?: ClosedIncident; hour: Hour }> = []
  let st = state
  for (let i = Math.max(0, lo); i < values.length; i++) {
    const t = from + i * HOUR
    const wasPending = st.pending
    const r = stepHour(kind, st, t, usableBefore(values, from, i, st.since, st.flagged), values[i])
    st = r.state
    if (r.closed?.levelShift) st = reseedAfterShift(kind, st, values, from, i)
    // The first of two moderate hours becomes part of the incident it opened.
    if (r.opened && wasPending && r.opened.startedAt === wasPending.hour.t) {
      const prev = hours.find((h) => h.t === wasPending.hour.t)
      if (prev) prev.anomalous = true
    }
    hours.push(r.hour)
    if (r.opened || r.closed) events.push({ ...(r.opened ? { opened: r.opened } : {}), ...(r.closed ? { closed: r.closed } : {}), hour: r.hour })
  }
  return { state: st, hours, events }
}
