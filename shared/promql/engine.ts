// The PromQL evaluator (docs/decisions.md §25): the supported set, with Prometheus' own semantics, over a
// SeriesSource. Each query reads its selectors' samples once for the whole query (every step's windows), then
// evaluates step by step in memory, as Prometheus' engine does; a range query of the common shapes (a selector, a
// range-vector function of one, and sum/avg/min/max/count of either) a series at a time across all its steps
// instead, to the same answer (Evaluator.columns). Times are milliseconds inside, as in Prometheus.
//
// Windows follow Prometheus 3: a range selector and the 5-minute lookback of an instant selector are left-open,
// (t - d, t]. rate/increase/delta follow extrapolatedRate of Prometheus 2.42 (Debian's, the oracle bench:promql
// compares with), counter resets included.
import { COMPARISON, type BinaryOp, type Expr, type MatrixExpr, type SelectorExpr } from './ast.js'
import { PromQLError, parsePromQL } from './parse.js'
import { Arena } from './arena.js'
import type { Labels, Resolution, Series, SeriesSource } from './source.js'

export const LOOKBACK_MS = 5 * 60_000
/** Prometheus refuses range queries of more points per series than this. */
export const MAX_POINTS = 11_000

interface Elem {
  labels: Labels
  v: number
}
interface RangeElem {
  labels: Labels
  /** Times in ms. */
  ts: number[]
  vs: number[]
}

type Value =
  | { kind: 'scalar'; v: number }
  | { kind: 'string'; v: string }
  | { kind: 'vector'; items: Elem[] }
  | { kind: 'matrix'; items: RangeElem[] }

/** The samples of every series a selector matched, for the whole query: times in ms. */
interface Loaded {
  series: Array<{ labels: Labels; ts: Float64Array; vs: Float64Array }>
}

export type QueryData =
  | { resultType: 'vector'; result: Array<{ metric: Labels; value: [number, string] }> }
  | { resultType: 'matrix'; result: Array<{ metric: Labels; values: Array<[number, string]> }> }
  | { resultType: 'scalar' | 'string'; result: [number, string] }

/** One instant query at `time` (seconds). */
export async function instantQuery(source: SeriesSource, accountId: string, query: string, time: number): Promise<QueryData> {
  const expr = parsePromQL(query)
  const t = Math.round(time * 1000)
  const resolution = resolutionFor(expr, t, t, 0)
  // As rangeQuery's: the answer copies the samples it keeps (a range vector's too), then their memory goes back.
  const arenas: Arena[] = []
  try {
    const ev = new Evaluator(await load(source, accountId, expr, t, t, 0, resolution, arenas), resolution)
    return instantAnswer(ev.eval(expr, t), t / 1000)
  } finally {
    for (const a of arenas) a.release()
  }
}

function instantAnswer(v: Value, ts: number): QueryData {
  switch (v.kind) {
    case 'scalar':
      return { resultType: 'scalar', result: [ts, formatValue(v.v)] }
    case 'string':
      return { resultType: 'string', result: [ts, v.v] }
    case 'vector':
      return { resultType: 'vector', result: v.items.map((e) => ({ metric: e.labels, value: [ts, formatValue(e.v)] })) }
    case 'matrix':
      return {
        resultType: 'matrix',
        result: v.items.map((e) => ({
          metric: e.labels,
          values: e.ts.map((x, i) => [x / 1000, formatValue(e.vs[i])] as [number, string]),
        })),
      }
  }
}

/** A range query: instant evaluations at start, start+step, ... up to end (seconds). */
export async function rangeQuery(
  source: SeriesSource,
  accountId: string,
  query: string,
  start: number,
  end: number,
  step: number,
): Promise<QueryData> {
  const expr = parsePromQL(query)
  const t0 = Math.round(start * 1000)
  const t1 = Math.round(end * 1000)
  const dt = Math.round(step * 1000)
  if (dt <= 0) throw new PromQLError('zero or negative query resolution step widths are not accepted. Try a positive integer')
  if (t1 < t0) throw new PromQLError('end timestamp must not be before start time')
  if ((t1 - t0) / dt + 1 > MAX_POINTS)
    throw new PromQLError('exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)')
  const type = expr.type === 'matrix' ? 'matrix' : expr.type === 'string' ? 'string' : null
  if (type)
    throw new PromQLError(
      `invalid expression type "${type === 'matrix' ? 'range vector' : 'string'}" for range query, must be Scalar or instant Vector`,
    )
  const resolution = resolutionFor(expr, t0, t1, dt)
  // The samples' memory goes back to the arenas once the answer is built: it copies every number it keeps.
  const arenas: Arena[] = []
  try {
    const ev = new Evaluator(await load(source, accountId, expr, t0, t1, dt, resolution, arenas), resolution)
    const columns = ev.columns(expr, t0, dt, Math.floor((t1 - t0) / dt) + 1)
    if (columns) return { resultType: 'matrix', result: columns }
    const bySeries = new Map<string, { metric: Labels; values: Array<[number, string]> }>()
    for (let t = t0; t <= t1; t += dt) {
      const v = ev.eval(expr, t)
      const items = v.kind === 'scalar' ? [{ labels: {}, v: v.v }] : v.kind === 'vector' ? v.items : []
      for (const e of items) {
        const key = keyOf(e.labels)
        let s = bySeries.get(key)
        if (!s) bySeries.set(key, (s = { metric: e.labels, values: [] }))
        s.values.push([t / 1000, formatValue(e.v)])
      }
    }
    return { resultType: 'matrix', result: [...bySeries.values()] }
  } finally {
    for (const a of arenas) a.release()
  }
}

/** Functions whose answer over rollup buckets stays within a bucket of the raw answer (README states how). */
const ROLLUP_SAFE = new Set(['rate', 'increase', 'irate', 'delta', 'avg_over_time', 'last_over_time'])
/**
 * Functions whose window, over rollup buckets, also takes the sample at its very start (the running total or mean
 * at the window's left edge): with it a window of whole buckets holds the totals at both of its edges, so
 * increase() is the exact increase over the window's buckets and a window of one bucket still has two samples.
 */
const CLOSED_OVER_ROLLUPS = new Set(['rate', 'increase', 'irate', 'delta'])

const DAY_MS = 86_400_000
const MINUTE_MS = 60_000
/** Greatest common divisor of two whole numbers of milliseconds (durations in seconds may carry float error). */
function gcd(a: number, b: number): number {
  let [x, y] = [Math.abs(Math.round(a)), Math.abs(Math.round(b))]
  while (y) [x, y] = [y, x % y]
  return x
}

/**
 * Which resolution a query reads at: 0 for raw points, else the size in seconds of the rollup buckets read. As the
 * charts read: raw points when the span read is at most a day or a window feeds a function a bucket does not serve
 * (ROLLUP_SAFE). Otherwise buckets that every step time and offset falls on (their size divides the step, the
 * start and the offsets: Grafana aligns the start to the step), so each step's instant sample is the bucket that
 * ends at it; the largest such size in whole minutes that every window is whole buckets of, and else (a window of
 * 5m15s, as Grafana's $__rate_interval makes them) the largest that is no longer than the shortest window. A
 * range query's step bounds the size (a chart's bucket: a 1 h step over a month reads rollups_1h, a 1 d step
 * rollups_1d), an instant query's windows and its selectors' 5-minute lookback bound it. When the times fall on
 * no whole minute (start with seconds, step of 90 s): 1-minute buckets when the step is a minute or more and
 * every window 4 minutes or more (1-hour ones for steps of an hour and windows of 4 hours, without instant
 * selectors), samples at each minute's end.
 */
export function resolutionFor(expr: Expr, t0: number, t1: number, stepMs: number): Resolution {
  let maxWindow = 0
  let minWindow = Number.POSITIVE_INFINITY
  let instant = false
  let unsafe = false
  // What every step time and offset falls on, and what every window does besides.
  let base = stepMs > 0 ? gcd(stepMs, t0) : t0
  let windows = 0
  walk(expr, (e, parent) => {
    if (e.type === 'selector') base = gcd(base, e.offset * 1000)
    if (e.type === 'selector' && parent?.type !== 'matrix') {
      instant = true
      maxWindow = Math.max(maxWindow, LOOKBACK_MS + e.offset * 1000)
      if (!stepMs) base = gcd(base, LOOKBACK_MS)
    }
    if (e.type === 'matrix') {
      maxWindow = Math.max(maxWindow, (e.range + e.selector.offset) * 1000)
      minWindow = Math.min(minWindow, e.range * 1000)
      windows = gcd(windows, e.range * 1000)
      if (parent?.type !== 'call' || !ROLLUP_SAFE.has(parent.fn)) unsafe = true
    }
  })
  if (unsafe || t1 - t0 + maxWindow <= DAY_MS) return 0
  // Neither a step nor a window: an instant query of time() or numbers alone reads nothing.
  if (!stepMs && !instant && minWindow === Number.POSITIVE_INFINITY) return 0
  const exact = gcd(base, windows)
  if (exact >= MINUTE_MS && exact % MINUTE_MS === 0) return exact / 1000
  if (base >= MINUTE_MS && base % MINUTE_MS === 0) {
    // The largest whole-minute divisor of `base` no longer than the shortest window.
    const minutes = base / MINUTE_MS
    for (let d = Math.min(minutes, Math.floor(minWindow / MINUTE_MS)); d >= 1; d--) if (minutes % d === 0) return d * 60
  }
  const step = stepMs || Number.POSITIVE_INFINITY
  if (!instant && step >= 3_600_000 && minWindow >= 4 * 3_600_000) return 3600
  if (step >= 60_000 && minWindow >= 240_000) return 60
  return 0
}

function walk(e: Expr, fn: (e: Expr, parent: Expr | null) => void, parent: Expr | null = null): void {
  fn(e, parent)
  const kids: Expr[] =
    e.type === 'matrix'
      ? [e.selector]
      : e.type === 'call'
        ? e.args
        : e.type === 'aggregate'
          ? [...(e.param ? [e.param] : []), e.expr]
          : e.type === 'binary'
            ? [e.lhs, e.rhs]
            : e.type === 'unary'
              ? [e.expr]
              : []
  for (const k of kids) walk(k, fn, e)
}

/**
 * Each selector's series found last, by account and matchers (LAST_SERIES of them, the oldest out first; a longer list
 * than LAST_SERIES_LENGTH is not kept: its read costs far more than the round trip saved).
 */
const lastSeries = new Map<string, Series[]>()
const LAST_SERIES = 1_000
const LAST_SERIES_LENGTH = 2_000

/** Whether reading the samples of `a` reads those of `b`: the same series, kinds and order. */
function sameReads(a: Series[], b: Series[]): boolean {
  return a.length === b.length && a.every((s, i) => s.id === b[i].id && s.kind === b[i].kind)
}

async function load(
  source: SeriesSource,
  accountId: string,
  expr: Expr,
  t0: number,
  t1: number,
  /** The range query's step in ms (0 for an instant query). */
  step: number,
  resolution: Resolution,
  /** The arenas of the samples loaded, for the caller to release once done with them. */
  arenas: Arena[],
): Promise<Map<SelectorExpr, Loaded>> {
  const selectors: Array<{ sel: SelectorExpr; window: number }> = []
  walk(expr, (e, parent) => {
    if (e.type === 'selector') selectors.push({ sel: e, window: parent?.type === 'matrix' ? parent.range * 1000 : LOOKBACK_MS })
  })
  const out = new Map<SelectorExpr, Loaded>()
  await Promise.all(
    selectors.map(async ({ sel, window }) => {
      const from = t0 - sel.offset * 1000 - window
      const to = t1 - sel.offset * 1000
      // A window much shorter than the step needs only each step's window, not the span between them.
      const stretches: Array<[number, number]> | undefined = step > 0 && window * 2 <= step ? [] : undefined
      if (stretches) for (let t = t0 - sel.offset * 1000; t <= to; t += step) stretches.push([(t - window) / 1000, t / 1000])
      const read = (list: Series[], arena: Arena) => source.readSamples(list, from / 1000, to / 1000, resolution, stretches, arena)
      // The series and their samples in one round trip where the series are those this selector found last time
      // (a dashboard refreshing its panels): the samples of those are read beside the look-up, and kept only if the
      // look-up finds the same series (the read takes nothing else of them); otherwise they are read again. A read
      // left unused may still be running: its arena is never released.
      const key = `${accountId}\u0000${JSON.stringify(sel.matchers)}`
      const guess = lastSeries.get(key)
      const earlyArena = new Arena()
      const early = guess ? read(guess, earlyArena) : undefined
      early?.catch(() => {})
      const series: Series[] = await source.selectSeries(accountId, sel.matchers, from / 1000, to / 1000)
      lastSeries.delete(key)
      if (series.length <= LAST_SERIES_LENGTH) lastSeries.set(key, series)
      if (lastSeries.size > LAST_SERIES) lastSeries.delete(lastSeries.keys().next().value!)
      const arena = early && sameReads(guess!, series) ? earlyArena : new Arena()
      const samples = await (arena === earlyArena ? early! : read(series, arena))
      arenas.push(arena)
      out.set(sel, {
        series: series.map((s) => {
          const { t, v, unit } = samples.get(s.id) ?? { t: [], v: [] }
          let ts: Float64Array
          if (unit === 'ms' && t instanceof Float64Array) ts = t
          else {
            ts = new Float64Array(t.length)
            for (let i = 0; i < t.length; i++) ts[i] = Math.round(t[i] * 1000)
          }
          return { labels: s.labels, ts, vs: v instanceof Float64Array ? v : Float64Array.from(v) }
        }),
      })
    }),
  )
  return out
}

/** Index of the first element of sorted `a` greater than x. */
export function upperBound(a: ArrayLike<number>, x: number): number {
  let lo = 0
  let hi = a.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (a[mid] <= x) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * upperBound(a, x), sought forward from `from` when that is an upper bound of a smaller x (the window's edge at the
 * step before): a few comparisons a step instead of a binary search over the whole series.
 */
function upperBoundFrom(a: ArrayLike<number>, x: number, from: number): number {
  if (from > a.length || (from > 0 && a[from - 1] > x)) return upperBound(a, x)
  for (let i = from, n = 0; i < a.length; i++, n++) {
    if (a[i] > x) return i
    if (n === 8) return upperBound(a, x)
  }
  return a.length
}

const vec = (items: Elem[]): Value => ({ kind: 'vector', items })

/** Whether the elements carry these labels objects, in this order (a loop: no closure made at each step). */
function sameLabels(items: Elem[], labels: Labels[]): boolean {
  for (let i = 0; i < items.length; i++) if (items[i].labels !== labels[i]) return false
  return true
}

const keys = new WeakMap<Labels, string>()

/** labelsKey, once per labels object: a selector's series keep theirs across the steps of a range query. */
function keyOf(l: Labels): string {
  let k = keys.get(l)
  if (k === undefined) keys.set(l, (k = labelsKey(l)))
  return k
}

export function labelsKey(l: Labels): string {
  return JSON.stringify(
    Object.keys(l)
      .sort()
      .map((k) => [k, l[k]]),
  )
}

const nameless = new WeakMap<Labels, Labels>()

/** The labels without __name__: the same object for the same labels, so keyOf's cache holds across steps. */
const dropName = (l: Labels): Labels => {
  if (!('__name__' in l)) return l
  let rest = nameless.get(l)
  if (!rest) {
    const { __name__: _, ...others } = l
    nameless.set(l, (rest = others))
  }
  return rest
}

const pick = (l: Labels, names: string[]): Labels => Object.fromEntries(names.filter((n) => n in l).map((n) => [n, l[n]]))
const omit = (l: Labels, names: string[]): Labels => Object.fromEntries(Object.entries(l).filter(([k]) => !names.includes(k)))

/** The range-vector functions (overTime's). */
const RANGE_FUNCTIONS = new Set([
  'rate',
  'increase',
  'delta',
  'irate',
  'sum_over_time',
  'count_over_time',
  'avg_over_time',
  'min_over_time',
  'max_over_time',
  'last_over_time',
  'quantile_over_time',
])
/** The aggregations a range query folds series by series (Evaluator.columns). */
const FOLDED = new Set(['sum', 'avg', 'min', 'max', 'count'])

/** A selector's or a range-vector function's series, each evaluated at every step of a range query in one pass. */
interface SeriesSteps {
  /** Each series' labels in the answer, in the order a step's answer lists them. */
  labels: Labels[]
  /** Series k's value at each step into v, and has[i] 1 where it has one there, 0 where not. */
  fill(k: number, v: Float64Array, has: Uint8Array): void
}

type RangeSeries = { metric: Labels; values: Array<[number, string]> }

/**
 * A series' values at each step (where `has`) added into its group's (`acc`, with `n` members so far), as aggregate()
 * adds a step's: a sum from 0, Prometheus' incremental mean, NaN replaced by min and max. A loop per operation.
 */
function fold(op: string, acc: Float64Array, n: Uint32Array, v: Float64Array, has: Uint8Array, from: number): void {
  const steps = acc.length
  switch (op) {
    case 'sum':
      for (let i = from; i < steps; i++) {
        if (!has[i]) continue
        acc[i] += v[i]
        n[i]++
      }
      return
    case 'avg':
      for (let i = from; i < steps; i++) {
        if (!has[i]) continue
        const c = ++n[i]
        if (c === 1) acc[i] = v[i]
        else acc[i] += v[i] / c - acc[i] / c
      }
      return
    case 'min':
      for (let i = from; i < steps; i++) if (has[i] && (++n[i] === 1 || acc[i] > v[i] || Number.isNaN(acc[i]))) acc[i] = v[i]
      return
    case 'max':
      for (let i = from; i < steps; i++) if (has[i] && (++n[i] === 1 || acc[i] < v[i] || Number.isNaN(acc[i]))) acc[i] = v[i]
      return
    case 'count':
      for (let i = from; i < steps; i++) if (has[i]) acc[i] = ++n[i]
      return
  }
}

/**
 * rate, increase or delta of one series at each step of a range query (as fill() in seriesSteps takes them): each
 * step's window [lo, hi) sought forward from the step before's. A function of its own rather than a branch of the
 * closure made for each query, in which the loop cost 35 ns a step (the same loop here, measured alone: 18).
 */
function rateSteps(
  s: { ts: Float64Array; vs: Float64Array },
  r: { t0: number; dt: number; steps: number; length: number; offset: number; closed: number },
  isCounter: boolean,
  isRate: boolean,
  v: Float64Array,
  has: Uint8Array,
): void {
  const { ts, vs } = s
  let lo = 0
  let hi = 0
  for (let i = 0, t = r.t0; i < r.steps; i++, t += r.dt) {
    const rangeStart = t - (r.length + r.offset) * 1000
    const rangeEnd = t - r.offset * 1000
    const left = rangeStart - r.closed
    while (hi < ts.length && ts[hi] <= rangeEnd) hi++
    while (lo < ts.length && ts[lo] <= left) lo++
    has[i] = extrapolatedRateInto(ts, vs, rangeStart, rangeEnd, r.length, isCounter, isRate, lo, hi, v, i) ? 1 : 0
  }
}

/** Whether no two of the labels are one label set. */
function distinct(labels: Labels[]): boolean {
  const seen = new Set<string>()
  for (const l of labels) {
    const k = keyOf(l)
    if (seen.has(k)) return false
    seen.add(k)
  }
  return true
}

class Evaluator {
  constructor(
    private readonly data: Map<SelectorExpr, Loaded>,
    /** 0 over raw points, else the rollup buckets' size in seconds (the samples sit on bucket ends). */
    private readonly resolution: Resolution,
  ) {}

  /**
   * A range query's answer evaluated a series at a time across all its steps, or null for an expression of another
   * shape (evaluated step by step). The shapes: a selector, a range-vector function of one, and sum, avg, min, max or
   * count (by or without labels) of either. Step by step, a week at 5 minutes over 100 series made an element object
   * per series and step and grouped them again at each step; here a series' windows are one forward pass over its
   * samples into a typed array, added into its group's. The numbers are the step-by-step ones (the same function on
   * the same window, a group's values added up in the same order), and so is the order of the series: by the step
   * each first answers at, then as that step lists them. Where two series' answers share a label set (an error or
   * one series of both, step by step), the query is evaluated step by step.
   */
  columns(e: Expr, t0: number, dt: number, steps: number): RangeSeries[] | null {
    if (e.type === 'aggregate') return this.folded(e, t0, dt, steps)
    const input = this.seriesSteps(e, t0, dt, steps)
    if (!input || !distinct(input.labels)) return null
    const v = new Float64Array(steps)
    const has = new Uint8Array(steps)
    const out: Array<RangeSeries & { first: number }> = []
    for (let k = 0; k < input.labels.length; k++) {
      input.fill(k, v, has)
      const first = has.indexOf(1)
      if (first < 0) continue
      const values: Array<[number, string]> = []
      for (let i = first, t = t0 + first * dt; i < steps; i++, t += dt) if (has[i]) values.push([t / 1000, formatValue(v[i])])
      out.push({ metric: input.labels[k], values, first })
    }
    // A stable sort: the series first answering at one step keep the order that step lists them in.
    return out.sort((a, b) => a.first - b.first).map(({ metric, values }) => ({ metric, values }))
  }

  /** An aggregation's answer at every step, its input's series folded into their groups one after another. */
  private folded(e: Extract<Expr, { type: 'aggregate' }>, t0: number, dt: number, steps: number): RangeSeries[] | null {
    if (!FOLDED.has(e.op) || e.param) return null
    const input = this.seriesSteps(e.expr, t0, dt, steps)
    if (!input || (e.expr.type === 'call' && !distinct(input.labels))) return null
    // A group's value and count of members at each step; the step it first answers at, and its first member
    // answering there (which places it in that step's answer).
    const groups = new Map<string, { labels: Labels; acc: Float64Array; n: Uint32Array; first: number; rank: number }>()
    const v = new Float64Array(steps)
    const has = new Uint8Array(steps)
    for (let k = 0; k < input.labels.length; k++) {
      input.fill(k, v, has)
      const first = has.indexOf(1)
      if (first < 0) continue
      const { labels, key } = this.groupOf(e, input.labels[k])
      let g = groups.get(key)
      if (!g) groups.set(key, (g = { labels, acc: new Float64Array(steps), n: new Uint32Array(steps), first, rank: k }))
      else if (first < g.first) [g.first, g.rank] = [first, k]
      fold(e.op, g.acc, g.n, v, has, first)
    }
    return [...groups.values()]
      .sort((a, b) => a.first - b.first || a.rank - b.rank)
      .map((g) => {
        const values: Array<[number, string]> = []
        for (let i = g.first, t = t0 + g.first * dt; i < steps; i++, t += dt) if (g.n[i]) values.push([t / 1000, formatValue(g.acc[i])])
        return { metric: g.labels, values }
      })
  }

  /** A selector's or a range-vector function's series over the steps (as instant() and call() take them), else null. */
  private seriesSteps(e: Expr, t0: number, dt: number, steps: number): SeriesSteps | null {
    if (e.type === 'selector') {
      const series = this.data.get(e)!.series
      const shift = e.offset * 1000
      return {
        labels: series.map((s) => s.labels),
        fill(k, v, has) {
          const { ts, vs } = series[k]
          // The last sample at or before each step's time, sought forward from the step before's.
          let j = 0
          for (let i = 0, t = t0; i < steps; i++, t += dt) {
            const at = t - shift
            while (j < ts.length && ts[j] <= at) j++
            has[i] = j > 0 && ts[j - 1] > at - LOOKBACK_MS ? 1 : 0
            if (has[i]) v[i] = vs[j - 1]
          }
        },
      }
    }
    if (e.type !== 'call' || !RANGE_FUNCTIONS.has(e.fn)) return null
    const m = e.args[e.args.length - 1]
    const p = e.args[0]
    if (m.type !== 'matrix' || (e.fn === 'quantile_over_time' && p.type !== 'number')) return null
    const fn = e.fn
    const phi = fn === 'quantile_over_time' && p.type === 'number' ? p.value : 0
    const series = this.data.get(m.selector)!.series
    const closed = this.resolution > 0 && CLOSED_OVER_ROLLUPS.has(fn) ? 1 : 0
    return {
      labels: series.map((s) => (fn === 'last_over_time' ? s.labels : dropName(s.labels))),
      fill(k, v, has) {
        const s = series[k]
        const range = { t0, dt, steps, length: m.range, offset: m.selector.offset, closed }
        if (fn === 'rate' || fn === 'increase' || fn === 'delta') return rateSteps(s, range, fn !== 'delta', fn === 'rate', v, has)
        const ts = s.ts
        // Each step's window [lo, hi), both ends sought forward from the step before's.
        let lo = 0
        let hi = 0
        for (let i = 0, t = t0; i < steps; i++, t += dt) {
          const rangeStart = t - (m.range + m.selector.offset) * 1000
          const rangeEnd = t - m.selector.offset * 1000
          const left = rangeStart - closed
          while (hi < ts.length && ts[hi] <= rangeEnd) hi++
          while (lo < ts.length && ts[lo] <= left) lo++
          const r = hi > lo ? overTime(fn, s, rangeStart, rangeEnd, m.range, phi, lo, hi) : null
          has[i] = r === null ? 0 : 1
          if (r !== null) v[i] = r
        }
      },
    }
  }

  /** Per expression, the labels of the last answer found free of duplicate label sets. */
  private readonly checked = new WeakMap<Expr, Labels[]>()

  eval(e: Expr, t: number): Value {
    const v = this.evalNode(e, t)
    // As Prometheus: a function or operator whose answer holds two series of one label set (rate() over several
    // metrics, once it drops their names) is an error, not a silent merge.
    if (v.kind === 'vector' && (e.type === 'call' || e.type === 'binary' || e.type === 'unary') && v.items.length > 1) {
      // The same series as the step before (the same labels objects, in the same order) were checked then.
      const last = this.checked.get(e)
      if (last && last.length === v.items.length && sameLabels(v.items, last)) return v
      const seen = new Set<string>()
      for (const x of v.items) {
        const k = keyOf(x.labels)
        if (seen.has(k)) throw new PromQLError('vector cannot contain metrics with the same labelset', 'execution')
        seen.add(k)
      }
      this.checked.set(
        e,
        v.items.map((x) => x.labels),
      )
    }
    return v
  }

  private evalNode(e: Expr, t: number): Value {
    switch (e.type) {
      case 'number':
        return { kind: 'scalar', v: e.value }
      case 'string':
        return { kind: 'string', v: e.value }
      case 'selector':
        return { kind: 'vector', items: this.instant(e, t) }
      case 'matrix':
        return { kind: 'matrix', items: this.range(e, t) }
      case 'unary': {
        const v = this.eval(e.expr, t)
        if (e.op === '+') return v
        if (v.kind === 'scalar') return { kind: 'scalar', v: -v.v }
        if (v.kind === 'vector') return { kind: 'vector', items: v.items.map((x) => ({ labels: dropName(x.labels), v: -x.v })) }
        throw new PromQLError('unary minus on a non-numeric value')
      }
      case 'call':
        return this.call(e, t)
      case 'aggregate':
        return { kind: 'vector', items: this.aggregate(e, t) }
      case 'binary':
        return this.binary(e, t)
    }
  }

  private instant(sel: SelectorExpr, t: number): Elem[] {
    const at = t - sel.offset * 1000
    const out: Elem[] = []
    for (const s of this.data.get(sel)!.series) {
      const i = upperBound(s.ts, at) - 1
      if (i >= 0 && s.ts[i] > at - LOOKBACK_MS) out.push({ labels: s.labels, v: s.vs[i] })
    }
    return out
  }

  /** The window (t - range, t] of each series: an instant query's range-vector answer. */
  private range(m: MatrixExpr, t: number): RangeElem[] {
    const at = t - m.selector.offset * 1000
    const out: RangeElem[] = []
    for (const s of this.data.get(m.selector)!.series) {
      const hi = upperBound(s.ts, at)
      const lo = upperBound(s.ts, at - m.range * 1000)
      if (hi > lo) out.push({ labels: s.labels, ts: Array.from(s.ts.subarray(lo, hi)), vs: Array.from(s.vs.subarray(lo, hi)) })
    }
    return out
  }

  private scalarArg(e: Expr, t: number): number {
    const v = this.eval(e, t)
    if (v.kind !== 'scalar') throw new PromQLError('expected a scalar')
    return v.v
  }

  private vectorArg(e: Expr, t: number): Elem[] {
    const v = this.eval(e, t)
    if (v.kind !== 'vector') throw new PromQLError('expected an instant vector')
    return v.items
  }

  /** A function of each element's value (abs, round, ...), the name dropped. */
  private mapped(e: Extract<Expr, { type: 'call' }>, t: number, f: (v: number) => number): Value {
    return vec(this.vectorArg(e.args[0], t).map((x) => ({ labels: dropName(x.labels), v: f(x.v) })))
  }

  // No closure is made on the way to a range-vector function: a range query calls this at each step, and under
  // tsx (the benches run under it) each closure made is also named, which cost more than the function's own work
  // for one series.
  private call(e: Extract<Expr, { type: 'call' }>, t: number): Value {
    switch (e.fn) {
      case 'time':
        return { kind: 'scalar', v: t / 1000 }
      case 'vector':
        return vec([{ labels: {}, v: this.scalarArg(e.args[0], t) }])
      case 'scalar': {
        const items = this.vectorArg(e.args[0], t)
        return { kind: 'scalar', v: items.length === 1 ? items[0].v : Number.NaN }
      }
      case 'abs':
        return this.mapped(e, t, Math.abs)
      case 'ceil':
        return this.mapped(e, t, Math.ceil)
      case 'floor':
        return this.mapped(e, t, Math.floor)
      case 'round': {
        const inverse = 1 / (e.args[1] ? this.scalarArg(e.args[1], t) : 1)
        return this.mapped(e, t, (v) => Math.floor(v * inverse + 0.5) / inverse)
      }
      case 'clamp_min': {
        const min = this.scalarArg(e.args[1], t)
        return this.mapped(e, t, (v) => Math.max(min, v))
      }
      case 'clamp_max': {
        const max = this.scalarArg(e.args[1], t)
        return this.mapped(e, t, (v) => Math.min(max, v))
      }
    }
    // The range-vector functions.
    const m = e.args[e.args.length - 1] as MatrixExpr
    const phi = e.fn === 'quantile_over_time' ? this.scalarArg(e.args[0], t) : 0
    const rangeStart = t - (m.range + m.selector.offset) * 1000
    const rangeEnd = t - m.selector.offset * 1000
    const out: Elem[] = []
    // Each series' window as indices into its samples (as range() takes them), not copies: a week at 5-minute steps
    // is 200,000 windows for 100 series.
    const left = rangeStart - (this.resolution > 0 && CLOSED_OVER_ROLLUPS.has(e.fn) ? 1 : 0)
    const series = this.data.get(m.selector)!.series
    // The step before's bounds, from which this step's are sought (a range query's windows only move forward).
    let bounds = this.windows.get(e)
    if (!bounds) this.windows.set(e, (bounds = new Int32Array(2 * series.length)))
    for (let k = 0; k < series.length; k++) {
      const s = series[k]
      const hi = (bounds[2 * k + 1] = upperBoundFrom(s.ts, rangeEnd, bounds[2 * k + 1]))
      const lo = (bounds[2 * k] = upperBoundFrom(s.ts, left, bounds[2 * k]))
      if (hi <= lo) continue
      const v = overTime(e.fn, s, rangeStart, rangeEnd, m.range, phi, lo, hi)
      if (v !== null) out.push({ labels: e.fn === 'last_over_time' ? s.labels : dropName(s.labels), v })
    }
    return vec(out)
  }

  /** Per range-vector call, each series' window (its lo and hi indices) at the last step evaluated. */
  private readonly windows = new WeakMap<Expr, Int32Array>()

  /** Per aggregation, each series' group (its labels and their key), once: a series keeps its labels object across steps. */
  private readonly groups = new WeakMap<Expr, WeakMap<Labels, { labels: Labels; key: string }>>()

  private groupOf(e: Extract<Expr, { type: 'aggregate' }>, l: Labels): { labels: Labels; key: string } {
    let byLabels = this.groups.get(e)
    if (!byLabels) this.groups.set(e, (byLabels = new WeakMap()))
    let g = byLabels.get(l)
    if (!g) {
      const labels = !e.grouping ? {} : e.grouping.without ? omit(l, ['__name__', ...e.grouping.labels]) : pick(l, e.grouping.labels)
      byLabels.set(l, (g = { labels, key: labelsKey(labels) }))
    }
    return g
  }

  private aggregate(e: Extract<Expr, { type: 'aggregate' }>, t: number): Elem[] {
    const param = e.param ? this.scalarArg(e.param, t) : 0
    const items = this.vectorArg(e.expr, t)
    const groups = new Map<string, { labels: Labels; items: Elem[] }>()
    for (const x of items) {
      const { labels, key } = this.groupOf(e, x.labels)
      let g = groups.get(key)
      if (!g) groups.set(key, (g = { labels, items: [] }))
      g.items.push(x)
    }
    const out: Elem[] = []
    for (const g of groups.values()) {
      // The values in the group's order, without a copy of them (a week at 5-minute steps is 2,000 groups of 100).
      const vs = g.items
      switch (e.op) {
        case 'sum': {
          let sum = 0
          for (const x of vs) sum += x.v
          out.push({ labels: g.labels, v: sum })
          break
        }
        case 'avg': {
          // Prometheus' incremental mean, for the same rounding.
          let mean = vs[0].v
          for (let i = 1; i < vs.length; i++) mean += vs[i].v / (i + 1) - mean / (i + 1)
          out.push({ labels: g.labels, v: mean })
          break
        }
        case 'min': {
          let min = vs[0].v
          for (let i = 1; i < vs.length; i++) if (min > vs[i].v || Number.isNaN(min)) min = vs[i].v
          out.push({ labels: g.labels, v: min })
          break
        }
        case 'max': {
          let max = vs[0].v
          for (let i = 1; i < vs.length; i++) if (max < vs[i].v || Number.isNaN(max)) max = vs[i].v
          out.push({ labels: g.labels, v: max })
          break
        }
        case 'count':
          out.push({ labels: g.labels, v: vs.length })
          break
        case 'quantile':
          out.push({
            labels: g.labels,
            v: quantile(
              param,
              vs.map((x) => x.v),
            ),
          })
          break
        case 'topk':
        case 'bottomk': {
          const k = Math.floor(param)
          if (k < 1) break
          const sign = e.op === 'topk' ? -1 : 1
          const sorted = [...g.items].sort((a, b) => {
            if (Number.isNaN(a.v)) return 1
            if (Number.isNaN(b.v)) return -1
            return sign * (a.v - b.v)
          })
          out.push(...sorted.slice(0, k))
          break
        }
      }
    }
    return out
  }

  /** Per binary operation, each series' matching signature, once (as groupOf). */
  private readonly signatures = new WeakMap<Expr, WeakMap<Labels, string>>()

  private binary(e: Extract<Expr, { type: 'binary' }>, t: number): Value {
    const l = this.eval(e.lhs, t)
    const r = this.eval(e.rhs, t)
    const cmp = COMPARISON.has(e.op)
    if (l.kind === 'scalar' && r.kind === 'scalar') return { kind: 'scalar', v: apply(e.op, l.v, r.v) }
    if (l.kind === 'vector' && r.kind === 'scalar') return { kind: 'vector', items: this.vectorScalar(e, l.items, r.v, false) }
    if (l.kind === 'scalar' && r.kind === 'vector') return { kind: 'vector', items: this.vectorScalar(e, r.items, l.v, true) }
    if (l.kind !== 'vector' || r.kind !== 'vector')
      throw new PromQLError('binary expression must contain only scalar and instant vector types')
    let sigs = this.signatures.get(e)
    if (!sigs) this.signatures.set(e, (sigs = new WeakMap()))
    const sig = (x: Labels) => {
      let k = sigs.get(x)
      if (k === undefined)
        sigs.set(x, (k = labelsKey(e.matching?.on ? pick(x, e.matching.labels) : omit(x, ['__name__', ...(e.matching?.labels ?? [])]))))
      return k
    }
    const right = new Map<string, Elem>()
    for (const x of r.items) {
      const k = sig(x.labels)
      if (right.has(k))
        throw new PromQLError(
          `found duplicate series for the match group ${k} on the right hand-side of the operation: many-to-many matching not allowed: matching labels must be unique on one side`,
          'execution',
        )
      right.set(k, x)
    }
    const seen = new Set<string>()
    const out: Elem[] = []
    for (const x of l.items) {
      const k = sig(x.labels)
      const y = right.get(k)
      if (!y) continue
      if (seen.has(k))
        throw new PromQLError('multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)', 'execution')
      seen.add(k)
      const v = apply(e.op, x.v, y.v)
      if (cmp && !e.bool && v === 0) continue
      let labels = x.labels
      if (!cmp || e.bool) labels = dropName(labels)
      if (e.matching?.on) labels = pick(labels, e.matching.labels)
      else if (e.matching) labels = omit(labels, e.matching.labels)
      out.push({ labels, v: cmp && !e.bool ? x.v : v })
    }
    return { kind: 'vector', items: out }
  }

  private vectorScalar(e: Extract<Expr, { type: 'binary' }>, items: Elem[], s: number, swap: boolean): Elem[] {
    const cmp = COMPARISON.has(e.op)
    const out: Elem[] = []
    for (const x of items) {
      const v = swap ? apply(e.op, s, x.v) : apply(e.op, x.v, s)
      if (cmp && !e.bool) {
        if (v === 1) out.push(x)
        continue
      }
      out.push({ labels: dropName(x.labels), v })
    }
    return out
  }
}

/** A binary operator on two numbers; comparisons give 1 or 0. */
function apply(op: BinaryOp, a: number, b: number): number {
  switch (op) {
    case '+':
      return a + b
    case '-':
      return a - b
    case '*':
      return a * b
    case '/':
      return a / b
    case '%':
      return a % b
    case '^':
      return a ** b
    case '==':
      return a === b ? 1 : 0
    case '!=':
      return a !== b ? 1 : 0
    case '>':
      return a > b ? 1 : 0
    case '<':
      return a < b ? 1 : 0
    case '>=':
      return a >= b ? 1 : 0
    case '<=':
      return a <= b ? 1 : 0
  }
}

/** Prometheus' quantile: linear interpolation between the nearest ranks. */
export function quantile(q: number, values: ArrayLike<number> & Iterable<number>): number {
  if (!values.length) return Number.NaN
  if (q < 0) return Number.NEGATIVE_INFINITY
  if (q > 1) return Number.POSITIVE_INFINITY
  const sorted = [...values].sort((a, b) => a - b)
  const n = sorted.length
  const rank = q * (n - 1)
  const lower = Math.max(0, Math.floor(rank))
  const upper = Math.min(n - 1, lower + 1)
  const weight = rank - Math.floor(rank)
  return sorted[lower] * (1 - weight) + sorted[upper] * weight
}

/**
 * A range-vector function over one series' window, its samples lo to hi - 1 (all of them by default); null when it
 * gives no sample. Times in ms, range in s.
 */
export function overTime(
  fn: string,
  s: { ts: ArrayLike<number>; vs: Float64Array | number[] },
  rangeStart: number,
  rangeEnd: number,
  range: number,
  phi: number,
  lo = 0,
  hi = s.vs.length,
): number | null {
  const { ts, vs } = s
  const n = hi - lo
  switch (fn) {
    case 'rate':
      return extrapolatedRate(ts, vs, rangeStart, rangeEnd, range, true, true, lo, hi)
    case 'increase':
      return extrapolatedRate(ts, vs, rangeStart, rangeEnd, range, true, false, lo, hi)
    case 'delta':
      return extrapolatedRate(ts, vs, rangeStart, rangeEnd, range, false, false, lo, hi)
    case 'irate': {
      if (n < 2) return null
      const last = vs[hi - 1]
      const prev = vs[hi - 2]
      const gap = ts[hi - 1] - ts[hi - 2]
      if (gap === 0) return null
      return (last < prev ? last : last - prev) / (gap / 1000)
    }
    case 'sum_over_time': {
      let sum = 0
      for (let i = lo; i < hi; i++) sum += vs[i]
      return sum
    }
    case 'count_over_time':
      return n
    case 'avg_over_time': {
      let mean = 0
      for (let i = lo; i < hi; i++) mean += vs[i] / (i - lo + 1) - mean / (i - lo + 1)
      return mean
    }
    case 'min_over_time': {
      let min = vs[lo]
      for (let i = lo + 1; i < hi; i++) if (min > vs[i] || Number.isNaN(min)) min = vs[i]
      return min
    }
    case 'max_over_time': {
      let max = vs[lo]
      for (let i = lo + 1; i < hi; i++) if (max < vs[i] || Number.isNaN(max)) max = vs[i]
      return max
    }
    case 'last_over_time':
      return vs[hi - 1]
    case 'quantile_over_time':
      return quantile(phi, vs.slice(lo, hi))
  }
  throw new PromQLError(`function ${JSON.stringify(fn)} is not supported`)
}

/**
 * Prometheus' extrapolatedRate (promql/functions.go, 2.42): the increase between the window's first and last
 * samples (resets added back for counters), extrapolated towards the window's edges when the samples come close
 * enough to them, never below zero for a counter. The window is samples lo to hi - 1 (all of them by default).
 */
export function extrapolatedRate(
  ts: ArrayLike<number>,
  vs: ArrayLike<number>,
  rangeStart: number,
  rangeEnd: number,
  rangeSeconds: number,
  isCounter: boolean,
  isRate: boolean,
  lo = 0,
  hi = vs.length,
): number | null {
  return extrapolatedRateInto(ts, vs, rangeStart, rangeEnd, rangeSeconds, isCounter, isRate, lo, hi, scratch, 0) ? scratch[0] : null
}

const scratch = new Float64Array(1)

/**
 * extrapolatedRate written into out[at]; false (out untouched) where it gives none. A range query's columns call it
 * once a series and step (200,000 times for a week of 5-minute steps over 100 series), and a number returned from a
 * call that is not inlined is a heap object each time.
 */
export function extrapolatedRateInto(
  ts: ArrayLike<number>,
  vs: ArrayLike<number>,
  rangeStart: number,
  rangeEnd: number,
  rangeSeconds: number,
  isCounter: boolean,
  isRate: boolean,
  lo: number,
  hi: number,
  out: Float64Array,
  at: number,
): boolean {
  const n = hi - lo
  if (n < 2) return false
  let result = vs[hi - 1] - vs[lo]
  if (isCounter) {
    let last = 0
    for (let i = lo; i < hi; i++) {
      if (vs[i] < last) result += last
      last = vs[i]
    }
  }
  let toStart = (ts[lo] - rangeStart) / 1000
  const toEnd = (rangeEnd - ts[hi - 1]) / 1000
  const sampled = (ts[hi - 1] - ts[lo]) / 1000
  const average = sampled / (n - 1)
  if (isCounter && result > 0 && vs[lo] >= 0) {
    const toZero = sampled * (vs[lo] / result)
    if (toZero < toStart) toStart = toZero
  }
  const threshold = average * 1.1
  let interval = sampled
  interval += toStart < threshold ? toStart : average / 2
  interval += toEnd < threshold ? toEnd : average / 2
  result *= interval / sampled
  if (isRate) result /= rangeSeconds
  out[at] = result
  return true
}

/** A sample value as Prometheus writes it: Go's strconv.FormatFloat(v, 'f', -1, 64). */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Number.POSITIVE_INFINITY) return '+Inf'
  if (v === Number.NEGATIVE_INFINITY) return '-Inf'
  const s = String(v)
  if (!s.includes('e')) return s
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s)
  if (!m) return s
  const [, sign, int, frac = '', expText] = m
  const exp = Number(expText)
  const digits = int + frac
  if (exp > 0) return sign + digits.padEnd(exp + 1, '0')
  return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`
}
