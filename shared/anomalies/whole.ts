// A stat read as a whole by the anomaly sweep, the back-test and the diagnostics (docs/decisions.md §24, §D-W): its
// own row and every tagged series under it, hour by hour, as the stat read adds them (counters summed, gauges
// weighted by their observations). A stat written only with tags holds nothing under its own id, so a read of that
// id alone would call it empty. The series' own hours are kept beside the whole for the stats that have tagged
// series: an incident names the series that carry it (carriersOf).
import type { Db } from '../db.js'
import type { Tags } from '../ingest/tags.js'
import { HOUR, readHourly, type HourlySeries } from '../stats/hourly.js'
import type { Kind } from '../stats/repo.js'
import { seriesOf } from '../stats/series.js'
import type { Cycle, Direction } from './detector.js'

/** One series of a stat, hour by hour (the same slots as the whole). */
export interface SeriesHours {
  id: string
  /** Null: the stat's own, untagged, series. */
  tags: Tags | null
  values: Array<number | null>
  counts: number[]
}

export interface WholeSeries extends HourlySeries {
  /** The stat's series, when it has tagged ones (absent for a stat written without tags). */
  series?: SeriesHours[]
}

/**
 * Hourly series of several stats as wholes over [from, to) (readHourly's rules: counters count an hour without
 * points as 0 from the stat's start, gauges leave it unknown), in one read of all their series.
 */
export async function readWholeHourly(
  sql: Db,
  stats: Array<{ id: string; kind: Kind; since?: Date }>,
  from: Date,
  to: Date,
): Promise<Map<string, WholeSeries>> {
  const series = await seriesOf(
    sql,
    stats.map((s) => s.id),
  )
  const read = await readHourly(
    sql,
    stats.flatMap((s) => series.get(s.id)!.map((x) => ({ id: x.id, kind: s.kind, since: s.since }))),
    from,
    to,
  )
  const out = new Map<string, WholeSeries>()
  for (const s of stats) {
    const list = series.get(s.id)!
    if (list.length === 1) {
      out.set(s.id, read.get(s.id)!)
      continue
    }
    const parts: SeriesHours[] = list.map((x) => {
      const r = read.get(x.id)!
      return { id: x.id, tags: x.tags, values: r.values, counts: r.counts }
    })
    out.set(s.id, { ...fold(s.kind, parts, read.get(s.id)!.from), series: parts })
  }
  return out
}

/** The whole of several series' hours: counters summed, gauges weighted by observations; unknown where every series is. */
export function fold(kind: Kind, parts: readonly SeriesHours[], from: number): HourlySeries {
  const slots = parts[0]?.values.length ?? 0
  const values: Array<number | null> = new Array(slots).fill(null)
  const counts: number[] = new Array(slots).fill(0)
  for (let i = 0; i < slots; i++) {
    let sum = 0
    let n = 0
    let known = false
    for (const p of parts) {
      const v = p.values[i]
      if (v === null || v === undefined) continue
      known = true
      n += p.counts[i]
      sum += kind === 'counter' ? v : v * p.counts[i]
    }
    counts[i] = n
    if (known) values[i] = kind === 'counter' ? sum : n > 0 ? sum / n : null
  }
  return { from, values, counts }
}

// ------------------------------------------------------------------ which series carry an incident

/** A series' share of an incident's departure (0 to 1). Tags null: the stat's untagged series. */
export interface Carrier {
  tags: Tags | null
  share: number
}

/** The most series named per incident, and the least share that is named at all. */
export const MAX_CARRIERS = 5
const MIN_SHARE = 0.05

const medianOf = (xs: number[]) => {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * The series whose departure makes up an incident, largest share first: over the incident's hours, each series'
 * value less its own usual value (the median of the same hour on the days before the incident, for a stat with a
 * daily or weekly cycle; else the median of the week before it), weighted as the whole adds it up (a counter's
 * series count fully, a gauge's by its share of the hour's observations), on the incident's side only. A series
 * without history before the incident is measured from 0 (counter) or from the whole's usual value (gauge): a
 * host that appears with a burst carries it. Empty when no series moved the incident's way (or the stat has one).
 */
export function carriersOf(
  kind: Kind,
  whole: HourlySeries,
  parts: readonly SeriesHours[],
  inc: { startedAt: number; endedAt: number | null; direction: Direction; cycle?: Cycle },
): Carrier[] {
  const n = whole.values.length
  const a = Math.max(0, Math.round((inc.startedAt - whole.from) / HOUR))
  const b = Math.min(n, inc.endedAt === null ? n : Math.round((inc.endedAt - whole.from) / HOUR))
  if (a >= b || parts.length < 2) return []
  const seasonal = inc.cycle === 'daily' || inc.cycle === 'weekly'
  const usual = (values: ReadonlyArray<number | null>, i: number): number | null => {
    const xs: number[] = []
    if (seasonal) {
      for (let j = i - 24; j >= Math.max(0, a - 7 * 24); j -= 24)
        if (j < a && values[j] !== null && values[j] !== undefined) xs.push(values[j]!)
    } else for (let j = Math.max(0, a - (7 * 24 - 1)); j < a; j++) if (values[j] !== null && values[j] !== undefined) xs.push(values[j]!)
    return medianOf(xs)
  }
  const sign = inc.direction === 'spike' ? 1 : -1
  const moved = parts.map((p) => {
    let dev = 0
    for (let i = a; i < b; i++) {
      const v = p.values[i]
      if (v === null || v === undefined) continue
      const base = usual(p.values, i) ?? (kind === 'counter' ? 0 : usual(whole.values, i))
      if (base === null) continue
      const w = kind === 'counter' ? 1 : whole.counts[i] > 0 ? p.counts[i] / whole.counts[i] : 0
      dev += w * (v - base)
    }
    return { tags: p.tags, moved: Math.max(0, sign * dev) }
  })
  const total = moved.reduce((s, m) => s + m.moved, 0)
  if (!(total > 0)) return []
  return moved
    .map((m) => ({ tags: m.tags, share: m.moved / total }))
    .filter((m) => m.share >= MIN_SHARE)
    .sort((x, y) => y.share - x.share)
    .slice(0, MAX_CARRIERS)
    .map((m) => ({ tags: m.tags, share: Math.round(m.share * 100) / 100 }))
}

/** A series as a person reads it: `host:web1`, `host:web1,region:eu`, or `untagged`. */
export const seriesLabel = (tags: Tags | null) =>
  tags
    ? Object.keys(tags)
        .sort()
        .map((k) => `${k}:${tags[k]}`)
        .join(',')
    : 'untagged'

/**
 * "mostly host:web1 (92 %)": the series that make up more than half of the incident, largest first (at most three),
 * or '' when none is known.
 */
export function carriedWords(carriers: readonly Carrier[] | null | undefined): string {
  if (!carriers?.length) return ''
  const named: Carrier[] = []
  let sum = 0
  for (const c of carriers) {
    if (named.length === 3) break
    named.push(c)
    sum += c.share
    if (sum > 0.5) break
  }
  const pct = (x: number) => `${Math.round(x * 100)} %`
  if (named.length === 1) return `mostly ${seriesLabel(named[0].tags)} (${pct(named[0].share)})`
  return `mostly ${named
    .slice(0, -1)
    .map((c) => seriesLabel(c.tags))
    .join(', ')} and ${seriesLabel(named[named.length - 1].tags)} (${pct(sum)} together)`
}
