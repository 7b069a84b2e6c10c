// The query bench's seeded account and the oracle that answers from it by
// hand: raw points in memory, summed, averaged and ranked directly over
// explicit windows. The oracle shares no code with the engine (no rollups,
// no period grammar, no formatter), so the corpus' expected answers come from
// the data, not from what the engine says.

export const MIN = 60
export const HOUR = 3_600
export const DAY = 86_400

export interface SeedStat {
  name: string
  kind: 'counter' | 'gauge'
  /** Seconds between points. */
  every: number
  /** The value of the point at time t (r: a uniform draw in [0, 1); k: the series' index, 0 when untagged). */
  value: (t: number, r: number, k: number) => number
  /** Written only with tags: one series per tag set, each its own points (docs/decisions.md §24). */
  series?: Array<Record<string, string>>
}

/** A tagged series as the oracle names it, the way the engine's answers do: `requests{host=web1}`. */
export const seriesName = (stat: string, tags: Record<string, string>) =>
  `${stat}{${Object.keys(tags)
    .sort()
    .map((k) => `${k}=${tags[k]}`)
    .join(',')}}`

/** Deterministic draws (mulberry32), so every run seeds the same values. */
function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d
const hourOf = (t: number) => Math.floor((t % DAY) / HOUR)
/** A daily shape: quiet at night, busy mid-afternoon (UTC). */
const daily = (t: number) => 0.4 + 0.6 * Math.sin((Math.PI * ((hourOf(t) + 18) % 24)) / 24) ** 2

export function seedStats(now: number): SeedStat[] {
  const yesterday = Math.floor(now / DAY) * DAY - DAY
  const spikeHour = yesterday + 14 * HOUR
  return [
    { name: 'signups', kind: 'counter', every: 10 * MIN, value: (t, r) => Math.floor(r * 5 * daily(t)) },
    { name: 'orders', kind: 'counter', every: 15 * MIN, value: (t, r) => 1 + Math.floor(r * 6 * daily(t)) },
    {
      name: 'errors',
      kind: 'counter',
      every: 20 * MIN,
      value: (t, r) => Math.floor(r * 3) + (t >= spikeHour && t < spikeHour + HOUR ? 50 : 0),
    },
    { name: 'revenue', kind: 'counter', every: 30 * MIN, value: (t, r) => round(5 + r * 115 * daily(t), 2) },
    { name: 'page-views', kind: 'counter', every: 5 * MIN, value: (t, r) => 10 + Math.floor(r * 50 * daily(t)) },
    { name: 'checkout.started', kind: 'counter', every: 15 * MIN, value: (t, r) => Math.floor(r * 8 * daily(t)) },
    { name: 'payments.failed', kind: 'counter', every: HOUR, value: (_t, r) => (r < 0.3 ? 1 : 0) },
    {
      name: 'jobs.processed',
      kind: 'counter',
      every: 10 * MIN,
      value: (t, r) => 20 + Math.floor(r * 60) + Math.floor((t - (now - 70 * DAY)) / (7 * DAY)),
    },
    { name: 'api.latency', kind: 'gauge', every: 5 * MIN, value: (t, r) => round(80 + r * 120 + 50 * daily(t), 1) },
    { name: 'api.latency.p95', kind: 'gauge', every: 5 * MIN, value: (t, r) => round(200 + r * 300 + 100 * daily(t), 1) },
    { name: 'cpu_usage', kind: 'gauge', every: 10 * MIN, value: (t, r) => round(5 + r * 60 + 30 * daily(t), 2) },
    { name: 'queue_depth', kind: 'gauge', every: 10 * MIN, value: (_t, r) => Math.floor(r * 40) },
    { name: 'active users', kind: 'gauge', every: 15 * MIN, value: (t, r) => Math.floor(100 + r * 100 + 300 * daily(t)) },
    { name: 'disk.free_gb', kind: 'gauge', every: HOUR, value: (t, r) => round(500 - (t - (now - 70 * DAY)) / DAY + r, 2) },
    // Read only since this time yesterday: yesterday's same stretch as today's has no reading (NaN: no point).
    { name: 'host.load', kind: 'gauge', every: 10 * MIN, value: (t, r) => (t >= now - DAY ? round(1 + r * 3, 2) : Number.NaN) },
    // Written only with tags: three hosts of different sizes, and a gauge per host and region.
    {
      name: 'requests',
      kind: 'counter',
      every: 10 * MIN,
      value: (t, r, k) => Math.floor(r * (4 + 3 * k) * daily(t)),
      series: [{ host: 'web1' }, { host: 'web2' }, { host: 'web3' }],
    },
    {
      name: 'response.ms',
      kind: 'gauge',
      every: 15 * MIN,
      value: (t, r, k) => round(40 + 30 * k + r * 20 + 20 * daily(t), 1),
      series: [
        { host: 'web1', region: 'eu' },
        { host: 'web2', region: 'eu' },
        { host: 'web3', region: 'us' },
      ],
    },
  ]
}

export type Points = Map<string, Array<[t: number, value: number]>>

/** 70 days of points up to a minute before `now` (a whole minute), each 37 s into its slot, so no point sits on a window edge. */
export function seedPoints(now: number, stats = seedStats(now)): Points {
  const out: Points = new Map()
  stats.forEach((s, i) => {
    const one = (draw: () => number, k: number) => {
      const pts: Array<[number, number]> = []
      const start = Math.floor((now - 70 * DAY) / s.every) * s.every
      for (let t = start + 37; t < now - MIN; t += s.every) {
        const v = s.value(t - 37, draw(), k)
        if (!Number.isNaN(v)) pts.push([t, v])
      }
      return pts
    }
    if (!s.series) {
      out.set(s.name, one(rng(1_000 + i), 0))
      return
    }
    // A tagged stat: each series under its own name, and the stat as the whole of them.
    const all: Array<[number, number]> = []
    s.series.forEach((tags, k) => {
      const pts = one(rng(1_000 + 100 * i + k), k)
      out.set(seriesName(s.name, tags), pts)
      all.push(...pts)
    })
    out.set(
      s.name,
      all.sort((a, b) => a[0] - b[0]),
    )
    // Each tag value's series together (`response.ms{region=eu}`), what a filter on that one tag reads.
    const pairs = new Set(s.series.flatMap((tags) => Object.entries(tags).map(([k, v]) => `${k}\u0000${v}`)))
    for (const pair of pairs) {
      const [k, v] = pair.split('\u0000')
      const pts = s.series.filter((tags) => tags[k] === v).flatMap((tags) => out.get(seriesName(s.name, tags))!)
      out.set(
        seriesName(s.name, { [k]: v }),
        pts.sort((a, b) => a[0] - b[0]),
      )
    }
  })
  return out
}

export interface Window {
  from: number
  to: number
}

export class Oracle {
  constructor(
    readonly points: Points,
    readonly kinds: Map<string, 'counter' | 'gauge'>,
    /** Tagged series by their names (`requests{host=web1}`): answered like stats, never ranked among them. */
    readonly seriesKinds: Map<string, 'counter' | 'gauge'> = new Map(),
  ) {}

  kindOf(stat: string): 'counter' | 'gauge' | undefined {
    return this.kinds.get(stat) ?? this.seriesKinds.get(stat)
  }

  private in(stat: string, w: Window): number[] {
    return (this.points.get(stat) ?? []).filter(([t]) => t >= w.from && t < w.to).map(([, v]) => v)
  }

  sum(stat: string, w: Window): number {
    return this.in(stat, w).reduce((a, b) => a + b, 0)
  }

  count(stat: string, w: Window): number {
    return this.in(stat, w).length
  }

  avg(stat: string, w: Window): number {
    const v = this.in(stat, w)
    return v.reduce((a, b) => a + b, 0) / v.length
  }

  min(stat: string, w: Window): number {
    return Math.min(...this.in(stat, w))
  }

  max(stat: string, w: Window): number {
    return Math.max(...this.in(stat, w))
  }

  /** The nearest-rank q-quantile of a gauge's readings (rank ceil(q·n), at least 1), what a percentile answer approximates. */
  percentile(stat: string, w: Window, q: number): number {
    const v = this.in(stat, w).sort((a, b) => a - b)
    return v[Math.max(1, Math.ceil(q * v.length - 1e-9)) - 1]
  }

  /** The kind's default: counters sum, gauges average. */
  value(stat: string, w: Window): number {
    return this.kindOf(stat) === 'counter' ? this.sum(stat, w) : this.avg(stat, w)
  }

  last(stat: string): { t: number; value: number } {
    const pts = this.points.get(stat)!
    const [t, value] = pts[pts.length - 1]
    return { t, value }
  }

  /** The busiest (or quietest) slot of a counter, or the slot holding the highest (lowest) reading of a gauge; the first on ties. */
  peak(stat: string, w: Window, slot: number, order: 'desc' | 'asc' = 'desc'): { t: number; value: number } {
    const counter = this.kindOf(stat) === 'counter'
    const bySlot = new Map<number, number[]>()
    for (const [t, v] of this.points.get(stat) ?? []) {
      if (t < w.from || t >= w.to) continue
      const s = Math.floor(t / slot) * slot
      if (!bySlot.has(s)) bySlot.set(s, [])
      bySlot.get(s)!.push(v)
    }
    let best: { t: number; value: number } | null = null
    for (const [t, vs] of [...bySlot].sort((a, b) => a[0] - b[0])) {
      if (order === 'asc' && (t < w.from || t + slot > w.to)) continue
      const v = counter ? vs.reduce((a, b) => a + b, 0) : order === 'desc' ? Math.max(...vs) : Math.min(...vs)
      if (!best || (order === 'desc' ? v > best.value : v < best.value)) best = { t, value: v }
    }
    return best!
  }

  /** Stats of a kind ordered by their value over the window. */
  rank(kind: 'counter' | 'gauge', w: Window, order: 'desc' | 'asc' = 'desc'): Array<{ stat: string; value: number }> {
    return [...this.kinds]
      .filter(([, k]) => k === kind)
      .map(([stat]) => ({ stat, value: this.value(stat, w) }))
      .filter((r) => Number.isFinite(r.value))
      .sort((a, b) => (order === 'desc' ? b.value - a.value : a.value - b.value) || a.stat.localeCompare(b.stat))
  }

  /** Every stat ordered by its percentage change from `before` to `w`. */
  growth(w: Window, before: Window, order: 'desc' | 'asc' = 'desc'): Array<{ stat: string; pct: number; value: number; previous: number }> {
    return [...this.kinds.keys()]
      .map((stat) => {
        const value = this.count(stat, w) ? this.value(stat, w) : this.kinds.get(stat) === 'counter' ? 0 : NaN
        const previous = this.count(stat, before) ? this.value(stat, before) : NaN
        return { stat, value, previous, pct: ((value - previous) / Math.abs(previous)) * 100 }
      })
      .filter((r) => Number.isFinite(r.pct))
      .sort((a, b) => (order === 'desc' ? b.pct - a.pct : a.pct - b.pct) || a.stat.localeCompare(b.stat))
  }
}
