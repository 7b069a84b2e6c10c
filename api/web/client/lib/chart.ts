// The stat chart: uPlot with this period solid and the previous period,
// shifted onto the same time axis, dashed. Buckets are laid on one dense grid
// so both series line up; an empty counter bucket is 0, an empty gauge
// bucket a gap (nothing was measured).
import uPlot from 'uplot'
import { BROWSER_ZONE, inZone, ZONE } from './clock.js'
import { num } from './format.js'

// One clock: the time axis in the page's zone (lib/clock.ts), says which zone, and writes
// dates and times the browser's locale's way (not uPlot's US 12-hour default).
const fmtTime = inZone({ hour: '2-digit', minute: '2-digit' })
const fmtDay = inZone({ month: 'short', day: 'numeric' })
const fmtFull = inZone({ dateStyle: 'medium', timeStyle: 'short' })
const dayOf = (t: number) => fmtDay.format(t * 1000)

/**
 * uPlot places its ticks on the midnights and whole hours of the browser's zone; in another zone they are
 * placed on that zone's (a six-hour tick at 00:00, 06:00 there, not at odd hours), through uPlot's tzDate.
 */
const zoneScale: Pick<uPlot.Options, 'tzDate'> = ZONE === BROWSER_ZONE ? {} : { tzDate: (t) => uPlot.tzDate(new Date(t * 1000), ZONE) }

/** The x axis: times under a day apart read as times with the day under the first of each day; else days. */
export const timeAxis: uPlot.Axis = {
  label: `Time (${ZONE})`,
  labelSize: 20,
  labelFont: '12px system-ui, sans-serif',
  // Room for a locale's widest time ("12:00 PM") between ticks, so labels never run together at 375 px.
  space: 90,
  values: (_u, ticks, _space, _n, incr) =>
    ticks.map((t, i) => {
      if (incr >= 86_400) return dayOf(t)
      const first = i === 0 || dayOf(ticks[i - 1]) !== dayOf(t)
      return first ? `${fmtTime.format(t * 1000)}\n${dayOf(t)}` : fmtTime.format(t * 1000)
    }),
}
/** The legend's time: the full date and time, in the same zone. */
export const timeLegend = (_u: uPlot, t: number | null) => (t == null ? '—' : fmtFull.format(t * 1000))

/**
 * Marks a painted chart: when it was first painted, in ms since navigation (the UI bench reads it), and
 * the time axis's label as painted on the canvas (which nothing else can read).
 */
const drawn = (el: HTMLElement) => (u: uPlot) => {
  el.dataset.drawnAt ??= String(Math.round(performance.now()))
  el.dataset.timeAxis = String(u.axes[0].label ?? '')
}

/** What a chart's accessible name adds, since its axes are painted: the zone its times are in. */
export const zoneWords = `times in ${ZONE}`

/** A bucket of the stats API; a gauge's may carry percentiles asked for (p50, p95, p99). */
export interface Bucket {
  t: number
  value: number
  n: number
  min?: number
  max?: number
  [percentile: `p${string}`]: number | undefined
}
export interface Band {
  t: number
  lo: number
  hi: number
  flagged?: boolean
}

export interface ChartInput {
  kind: 'counter' | 'gauge'
  from: number
  to: number
  bucket: number
  current: Bucket[]
  /** Previous period's buckets with their own timestamps; drawn shifted forward by `shift` seconds. */
  previous: Bucket[]
  shift: number
  /** The stat's unit, written on the value axis. */
  unit?: string | null
  /** The anomaly back-test's normal range per hour, drawn as a shaded band (only on hourly buckets). */
  band?: Band[]
  /** Percentile keys of the current buckets to draw as thin lines beside the average (gauges: p50, p95, p99). */
  percentiles?: ReadonlyArray<`p${string}`>
}

/** Line colours of the percentile series, lightest for the median. */
const PERCENTILE_STROKES = ['#7c3aed', '#ea580c', '#b91c1c', '#0f766e']

export function chartData(c: ChartInput): uPlot.AlignedData {
  const xs: number[] = []
  for (let t = c.from; t < c.to; t += c.bucket) xs.push(t)
  const fill = c.kind === 'counter' ? 0 : null
  const series = (points: Bucket[], offset: number) => {
    const byT = new Map(points.map((p) => [p.t + offset, p.value]))
    return xs.map((t) => byT.get(t) ?? fill)
  }
  const out: uPlot.AlignedData = [xs, series(c.current, 0), series(c.previous, c.shift)]
  // Percentile lines go last, so the band's series numbers stay what drawChart says.
  const byP = new Map(c.current.map((p) => [p.t, p]))
  const percentiles = (c.percentiles ?? []).map((k) => xs.map((t) => byP.get(t)?.[k] ?? null))
  if (!c.band?.length) return [...out, ...percentiles]
  const byT = new Map(c.band.map((b) => [b.t, b]))
  const withBand: uPlot.AlignedData = [...out, xs.map((t) => byT.get(t)?.lo ?? null), xs.map((t) => byT.get(t)?.hi ?? null)]
  if (!flaggedCount(c)) return [...withBand, ...percentiles]
  // The flagged hours: a marker at this period's value, nothing elsewhere.
  const current = out[1] as Array<number | null>
  return [...withBand, xs.map((t, i) => (byT.get(t)?.flagged ? current[i] : null)), ...percentiles]
}

/** How many of the chart's hours the back-test flagged as anomalous. */
export function flaggedCount(c: ChartInput): number {
  return c.band?.filter((b) => b.flagged && b.t >= c.from && b.t < c.to).length ?? 0
}

/**
 * uPlot draws points only on sparse charts; on a dense one a bucket with no neighbour (a gauge's only
 * observation, say) would have no line either and not show at all. Such buckets get their point.
 */
function loneToo(u: uPlot, si: number, show: boolean): number[] | null {
  if (show) return null
  const ys = u.data[si] as Array<number | null | undefined>
  const lone: number[] = []
  for (let i = 0; i < ys.length; i++) if (ys[i] != null && ys[i - 1] == null && ys[i + 1] == null) lone.push(i)
  return lone.length ? lone : null
}

export function drawChart(el: HTMLElement, c: ChartInput, label: string): uPlot {
  const width = Math.max(280, el.clientWidth)
  const height = width < 500 ? 240 : 320
  const opts: uPlot.Options = {
    width,
    height,
    title: undefined,
    ...zoneScale,
    scales: { x: { time: true } },
    axes: [timeAxis, { values: (_u, ticks) => ticks.map((v) => num(v)), size: 60, ...(c.unit ? { label: c.unit, labelSize: 18 } : {}) }],
    series: [
      { label: 'Time', value: timeLegend },
      {
        label: `${label} (this period)`,
        stroke: '#1d4ed8',
        width: 2,
        spanGaps: c.kind === 'gauge',
        value: (_u, v) => (v == null ? '—' : num(v)),
        points: { size: 5, filter: loneToo },
      },
      {
        label: 'Previous period',
        stroke: '#8a94a3',
        width: 1.5,
        dash: [6, 5],
        spanGaps: c.kind === 'gauge',
        value: (_u, v) => (v == null ? '—' : num(v)),
        points: { size: 5, filter: loneToo },
      },
      ...(c.band?.length
        ? [
            {
              label: 'Normal range (low)',
              stroke: 'rgba(22,163,74,0.5)',
              width: 1,
              value: (_u: uPlot, v: number | null) => (v == null ? '—' : num(v)),
              points: { show: false },
            },
            {
              label: 'Normal range (high)',
              stroke: 'rgba(22,163,74,0.5)',
              width: 1,
              value: (_u: uPlot, v: number | null) => (v == null ? '—' : num(v)),
              points: { show: false },
            },
          ]
        : []),
      // Markers only: no line joins the flagged hours.
      ...(flaggedCount(c)
        ? [
            {
              label: 'Flagged hour',
              stroke: '#dc2626',
              width: 0,
              paths: () => null,
              value: (_u: uPlot, v: number | null) => (v == null ? '—' : num(v)),
              points: { show: true, size: 9, fill: '#dc2626', stroke: '#dc2626' },
            },
          ]
        : []),
      ...(c.percentiles ?? []).map((k, i) => ({
        label: k,
        stroke: PERCENTILE_STROKES[i % PERCENTILE_STROKES.length],
        width: 1.25,
        dash: [2, 3],
        spanGaps: true,
        value: (_u: uPlot, v: number | null) => (v == null ? '—' : num(v)),
        points: { size: 4, filter: loneToo },
      })),
    ],
    // Shade between the high (4) and low (3) edges of the normal range.
    bands: c.band?.length ? [{ series: [4, 3], fill: 'rgba(22,163,74,0.12)' }] : undefined,
    cursor: { drag: { x: false, y: false } },
    hooks: { draw: [drawn(el)] },
  }
  return new uPlot(opts, chartData(c), el)
}

/** Keeps the chart as wide as its container (375 px phones to 1440 px screens). */
export function followWidth(el: HTMLElement, plot: uPlot, height: (width: number) => number = (w) => (w < 500 ? 240 : 320)): () => void {
  const ro = new ResizeObserver(() => {
    const w = Math.max(260, el.clientWidth)
    if (Math.abs(w - plot.width) > 2) plot.setSize({ width: w, height: height(w) })
  })
  ro.observe(el)
  return () => ro.disconnect()
}

/** One stat of an overlaid chart (a dashboard card, the correlations page). */
export interface OverlaySeries {
  name: string
  kind: 'counter' | 'gauge'
  points: Bucket[]
  unit?: string | null
}
export interface OverlayInput {
  from: number
  to: number
  bucket: number
  series: OverlaySeries[]
}

export const PALETTE = ['#1d4ed8', '#d97706', '#059669', '#9333ea', '#dc2626']

/**
 * What puts two series on one axis: their unit where they have one, else their kind (a counter's sums and a
 * gauge's levels are not the same quantity). The first such group reads on the left axis, the rest on the right.
 */
export const axisGroup = (s: OverlaySeries) => s.unit || (s.kind === 'counter' ? 'count' : 'level')

export function overlayData(c: OverlayInput): uPlot.AlignedData {
  const xs: number[] = []
  for (let t = c.from; t < c.to; t += c.bucket) xs.push(t)
  return [
    xs,
    ...c.series.map((s) => {
      const byT = new Map(s.points.map((p) => [p.t, p.value]))
      const fill = s.kind === 'counter' ? 0 : null
      return xs.map((t) => byT.get(t) ?? fill)
    }),
  ]
}

/**
 * Several stats on one time axis, a second y axis when they are not one quantity. `sync` joins charts whose
 * crosshair moves together (uPlot's cursor sync, by time); clicking a legend entry shows that series alone,
 * clicking it again shows them all (uPlot's legend isolate).
 */
export function drawOverlay(
  el: HTMLElement,
  c: OverlayInput,
  o: { sync?: string; height?: (w: number) => number; axisEach?: boolean; width?: number } = {},
): uPlot {
  const width = Math.max(260, o.width ?? el.clientWidth)
  const height = o.height ?? ((w: number) => (w < 500 ? 200 : 240))
  // axisEach: two stats compared for their shape (correlations), each on its own scale whatever they count.
  const group = (s: OverlaySeries) => (o.axisEach ? `${axisGroup(s)}\u0000${c.series.indexOf(s)}` : axisGroup(s))
  const groups = [...new Set(c.series.map(group))]
  const scaleOf = (s: OverlaySeries) => (groups.indexOf(group(s)) === 0 ? 'y' : 'y2')
  const axisLabel = (g: string | undefined) => {
    const unit = g?.split('\u0000')[0]
    return unit === 'count' || unit === 'level' ? undefined : unit
  }
  const fmt = (_u: uPlot, v: number | null) => (v == null ? '—' : num(v))
  const opts: uPlot.Options = {
    width,
    height: height(width),
    ...zoneScale,
    scales: { x: { time: true } },
    axes: [
      timeAxis,
      {
        scale: 'y',
        values: (_u, ticks) => ticks.map((v) => num(v)),
        size: 56,
        label: axisLabel(groups[0]),
        labelSize: axisLabel(groups[0]) ? 18 : 0,
      },
      ...(groups.length > 1
        ? [
            {
              scale: 'y2',
              side: 1 as const,
              grid: { show: false },
              values: (_u: uPlot, ticks: number[]) => ticks.map((v) => num(v)),
              size: 56,
              label: axisLabel(groups[1]),
              labelSize: axisLabel(groups[1]) ? 18 : 0,
            },
          ]
        : []),
    ],
    series: [
      { label: 'Time', value: timeLegend },
      ...c.series.map((s, i) => ({
        label: groups.length > 1 ? `${s.name} (${groups.indexOf(group(s)) === 0 ? 'left' : 'right'})` : s.name,
        scale: scaleOf(s),
        stroke: PALETTE[i % PALETTE.length],
        width: 2,
        spanGaps: s.kind === 'gauge',
        value: fmt,
        points: { size: 5, filter: loneToo },
      })),
    ],
    legend: { isolate: true },
    cursor: { drag: { x: false, y: false }, ...(o.sync ? { sync: { key: o.sync, setSeries: false } } : {}) },
    hooks: { draw: [drawn(el)] },
  }
  return new uPlot(opts, overlayData(c), el)
}
