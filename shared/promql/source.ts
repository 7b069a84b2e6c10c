// Where PromQL's series and samples come from: the seam between the evaluator and the service's storage
// (docs/decisions.md §25). The evaluator knows only this interface. Each series of a stat (§24: the stat's own
// row, untagged, and a child row per tag set) is one Prometheus series labelled {__name__: <stat name>, ...tags}
// (the untagged one {__name__} alone); selectSeries filters on every label, readSamples reads by series id.
//
// Counters appear as Prometheus counters, per series: the running total since the series' first point, so rate() and
// increase() (their extrapolation included) answer as Prometheus does on its own counters. Gauges are their
// points as they are.
//
// Resolution: the evaluator chooses it (engine.ts, resolutionFor): raw points, or buckets of `resolution` seconds (a
// multiple of a minute) read as the charts read theirs (the coarsest rollup table whose size divides the bucket,
// all series in one statement, each series' buckets packed in one row: shared/stats/hourly.ts, rollupParts). A
// bucket is one sample at its end: a gauge's mean over the bucket, a counter's running total at the bucket's end.
// When the query needs only short stretches of the span (windows much shorter than the step), only those are read
// (readRollups).
import type { Db } from '../db.js'
import { type BlockColumns, decodeBlockPoints, mergePoints, type Points, pointsOfRows, type Row } from '../points/blocks.js'
import { usesTimescale } from '../points/storage.js'
import { Arena } from './arena.js'
import type { DayBuckets } from '../stats/day-cache.js'
import { type Alongside, rollupParts, type RolledUp, type StatParts } from '../stats/hourly.js'
import type { Matcher } from './ast.js'
import { regexOf } from './parse.js'

export type Labels = Record<string, string>

export interface Series {
  /** The key readSamples reads by: the series' row id in stats (a stat's own id for its untagged series). */
  id: string
  labels: Labels
  kind: 'counter' | 'gauge'
  unit?: string | null
  help?: string | null
}

/** A series' samples as two columns, in time order: seconds since the epoch (fractions allowed) and the values. */
export interface Samples {
  t: ArrayLike<number>
  v: ArrayLike<number>
  /** t's unit when not seconds: whole milliseconds, the evaluator's own (spares it a pass over a week of buckets). */
  unit?: 'ms'
}

/** 0 for raw points, else the size in seconds of the buckets read (a multiple of 60). */
export type Resolution = number

export interface SeriesSource {
  /** Every series of the account whose labels satisfy all the matchers (start/end: seconds, advisory). */
  selectSeries(accountId: string, matchers: Matcher[], start?: number, end?: number): Promise<Series[]>
  /**
   * Each series' samples with start <= t <= end, in time order, at the resolution asked for. With `stretches`
   * ([from, to] pairs of seconds, in order), only the samples inside them are needed (a range query's windows when
   * they are much shorter than its step): the others may be left out.
   */
  readSamples(
    series: Series[],
    start: number,
    end: number,
    resolution: Resolution,
    stretches?: ReadonlyArray<readonly [number, number]>,
    /** Where the samples' arrays may be taken from (released by the caller once it is done with them). */
    arena?: Arena,
  ): Promise<Map<string, Samples>>
}

/** True when a series' labels satisfy a matcher (a missing label is the empty string, as in Prometheus). */
export function matches(labels: Labels, m: Matcher): boolean {
  const v = labels[m.name] ?? ''
  switch (m.op) {
    case '=':
      return v === m.value
    case '!=':
      return v !== m.value
    case '=~':
      return regexOf(m.value).test(v)
    case '!~':
      return !regexOf(m.value).test(v)
  }
}

type Run = <T>(fn: (sql: Db) => Promise<T>) => Promise<T>

/** The source over the stats' series: one Prometheus series per tag set. `run` runs a read (the read replica's, where one is fit). */
export function statsSource(run: Run): SeriesSource {
  return {
    async selectSeries(accountId, matchers) {
      // A stat's series (docs/decisions.md §24): its own row, untagged, and a child row per tag set. The name
      // equality and tag equalities narrow in SQL (tags @> {k: v}); every matcher is then applied here to the
      // labels (an account's series are at most a few thousand rows).
      const eq = matchers.find((m) => m.name === '__name__' && m.op === '=')
      const tagEq: Record<string, string> = {}
      for (const m of matchers) if (m.op === '=' && m.name !== '__name__' && m.value !== '') tagEq[m.name] = m.value
      const hasTagEq = Object.keys(tagEq).length > 0
      // A stat written only with tags has an untagged row without points: it is no series of Prometheus' (it
      // would be a phantom {__name__} in series lists and an empty group in `by`), so it is left out.
      const rows = await run(
        (sql) => sql<
          { id: string; name: string; kind: 'counter' | 'gauge'; unit: string | null; description: string | null; tags: Labels | null }[]
        >`
        select s.id, s.name, coalesce(p.kind, s.kind) as kind, coalesce(p.unit, s.unit) as unit,
          coalesce(p.description, s.description) as description, s.tags
        from stats s left join stats p on p.id = s.parent_id
        where s.account_id = ${accountId} ${eq ? sql`and s.name = ${eq.value}` : sql``}
          ${hasTagEq ? sql`and s.tags @> ${JSON.stringify(tagEq)}::text::jsonb` : sql``}
          and (s.parent_id is not null
            or not exists (select 1 from stats c where c.parent_id = s.id)
            or exists (select 1 from points x where x.stat_id = s.id)
            or exists (select 1 from point_blocks x where x.stat_id = s.id)
            or exists (select 1 from rollups_1m x where x.stat_id = s.id)
            -- Ordered as its key, so that the probe is the key's index: a day a series makes the table small
            -- beside its stats, and the planner, expecting a match in the first rows, scanned all of it for a
            -- stat with none (half of the statement for a tagged stat's untagged row).
            or exists (select 1 from rollups_1d x where x.stat_id = s.id order by x.stat_id, x.bucket limit 1))
        order by s.name, s.tags::text nulls first`,
      )
      const out: Series[] = []
      for (const r of rows) {
        const labels: Labels = { ...r.tags, __name__: r.name }
        if (matchers.every((m) => matches(labels, m))) out.push({ id: r.id, labels, kind: r.kind, unit: r.unit, help: r.description })
      }
      return out
    },

    async readSamples(series, start, end, resolution, stretches, arena = new Arena()) {
      if (!series.length) return new Map()
      if (resolution) return run((sql) => readRollups(sql, series, start, end, resolution, stretches, arena))
      const counters = series.filter((s) => s.kind === 'counter')
      // The samples and the counters' starting totals: two statements, on two connections at once.
      const [read, bases] = await Promise.all([
        run((sql) =>
          readRaw(
            sql,
            series.map((s) => s.id),
            start,
            end,
          ),
        ),
        counters.length ? run((sql) => totalsBefore(sql, counters, start)) : Promise.resolve(new Map<string, number>()),
      ])
      const out = new Map<string, Samples>()
      for (const s of series) {
        const samples = read.get(s.id) ?? { t: new Float64Array(0), v: new Float64Array(0) }
        if (s.kind === 'counter') {
          let total = bases.get(s.id) ?? 0
          const v = samples.v
          for (let i = 0; i < v.length; i++) v[i] = total += v[i]
        }
        out.set(s.id, samples)
      }
      return out
    },
  }
}

const at = (seconds: number) => new Date(seconds * 1000)

/** Raw points with start <= t <= end from both the hot rows and the day blocks (sql/0027, 0032). */
async function readRaw(sql: Db, ids: string[], start: number, end: number): Promise<Map<string, { t: Float64Array; v: Float64Array }>> {
  const dayStart = Math.floor(start / 86_400) * 86_400
  const [rows, blocks] = await Promise.all([
    sql<{ stat_id: string; us: string; value: number }[]>`
      select stat_id, (extract(epoch from ts) * 1000000)::int8 as us, value from points
      where stat_id = any(${ids}::uuid[]) and ts >= ${at(start)} and ts <= ${at(end)} order by stat_id, ts`,
    sql<(BlockColumns & { stat_id: string })[]>`
      select stat_id, day, dts, scale, ivals, fvals from point_blocks
      where stat_id = any(${ids}::uuid[]) and day >= ${at(dayStart)} and day <= ${at(end)} and last_ts >= ${at(start)} and first_ts <= ${at(end)}
      order by stat_id, day, seq`,
  ])
  const runs = new Map<string, Points[]>()
  const runsOf = (id: string) => {
    let r = runs.get(id)
    if (!r) runs.set(id, (r = []))
    return r
  }
  let hot: Row[] = []
  let hotId = ''
  for (const r of rows) {
    if (r.stat_id !== hotId) {
      if (hot.length) runsOf(hotId).push(pointsOfRows(hot))
      hot = []
      hotId = r.stat_id
    }
    hot.push(r)
  }
  if (hot.length) runsOf(hotId).push(pointsOfRows(hot))
  // Blocks of one day may overlap (write blocks not yet compacted); blocks of different days do not.
  for (const b of blocks) runsOf(b.stat_id).push(decodeBlockPoints(b, start * 1_000_000, end * 1_000_000 + 1))
  const out = new Map<string, { t: Float64Array; v: Float64Array }>()
  for (const [id, list] of runs) {
    const p = mergePoints(list)
    const t = new Float64Array(p.us.length)
    for (let i = 0; i < t.length; i++) t[i] = p.us[i] / 1_000_000
    out.set(id, { t, v: Float64Array.from(p.values) })
  }
  return out
}

const HOUR = 3_600

/**
 * Buckets of `size` seconds as samples at each bucket's end (the buckets with points): counters' running totals,
 * gauges' means. The charts' buckets (rollupParts, the read of readBucketsMany packed a series a row): days from
 * rollups_1d when `size` is whole days, hours from rollups_1h when whole hours, else five minutes from rollups_5m
 * (plain PostgreSQL) when whole 5 minutes, else minutes, grouped to `size`.
 *
 * With stretches much shorter than the span (`rate(x[5m])` at an hour's step), a counter's running total at a
 * stretch's bucket ends comes from the hours' totals (a whole day's from its five-minute blob, held or sent; the
 * others' from rollups_1h) and the few minutes between each end and its nearest hour: the minutes of the span
 * between the windows are never read as rows. The small buckets are then read only in those zones; the answer is
 * the same as the whole span's (within floating error: an hour's sum added up from its five-minute buckets rather
 * than from its minutes).
 */
async function readRollups(
  sql: Db,
  series: Series[],
  start: number,
  end: number,
  size: number,
  stretches: ReadonlyArray<readonly [number, number]> | undefined,
  arena: Arena,
): Promise<Map<string, Samples>> {
  // Buckets [f, t): the first ends at or after `start`, the last at or before `end`.
  const f = Math.ceil(start / size) * size - size
  const t = Math.floor(end / size) * size
  const ids = series.map((s) => s.id)
  const counters = series.filter((s) => s.kind === 'counter')
  const timescale = await usesTimescale(sql)
  const zones = stretches && size < HOUR && HOUR % size === 0 ? zonesOf(stretches, size, f, t, counters.length > 0) : null
  if (!zones) {
    // The whole span: each series' buckets in order, a counter's running total from its total before them.
    // f is a whole bucket, so a whole minute: the totals before it come with the buckets. On plain PostgreSQL, where
    // every tier holds the same points, they are the totals before the span's first midnight less the buckets read
    // before it: days alone rather than days, an hour and minutes taken away (Grafana's start for an hour's window
    // at a 15-minute step is 22:45), which was most of the statement.
    const d0 = Math.ceil(f / 86_400) * 86_400
    const baseAt = !timescale && d0 > f && d0 <= t ? d0 : f
    const read = await rollupParts(sql, ids, f, t, size, undefined, undefined, totalsAlongside(sql, counters, baseAt, timescale))
    const bases = basesOf(read)
    if (baseAt > f)
      for (const [id, total] of bases) {
        let base = total
        const rest = read.stats.get(id)?.rest
        for (let k = 0; rest && k < rest.t.length; k++) if (rest.t[k] >= f && rest.t[k] < baseAt) base -= rest.sum[k]
        bases.set(id, base)
      }
    const slots = (t - f) / size
    const out = new Map<string, Samples>()
    const dense = grid(read, f, size, slots)
    for (const s of series) {
      const { n, sum } = dense(s.id, [[0, slots]])
      out.set(s.id, samplesOf(n, sum, f, size, s.kind === 'counter' ? (bases.get(s.id) ?? 0) : null, arena))
    }
    return out
  }
  // Zones of the span: hours from fH, minutes (grouped to `size`) only inside the zones.
  const fH = Math.floor(f / HOUR) * HOUR
  const tH = Math.ceil(t / HOUR) * HOUR
  const hourSlots = (tH - fH) / HOUR
  const counterIds = counters.map((s) => s.id)
  // A counter's hours in a whole day come from the fine read's day blob (its slots added up): the hourly rollup is
  // read only where no blob covers them, the partial days at the span's ends beside the fine read, and a whole day
  // without a blob after it (today's, or one a late write touched until the builder packs it again). Reading the
  // month's hourly blobs as well cost a fifth of the query (bench:promql, sum(rate(l[5m])) at an hour's step).
  const d0 = Math.ceil(fH / 86_400) * 86_400
  const d1 = Math.floor(tH / 86_400) * 86_400
  const dayCount = Math.max(0, (d1 - d0) / 86_400)
  // The stretches' bucket ends (seconds), each once, in order: where the samples can be.
  const ends: number[] = []
  for (const [a, b] of stretches!)
    for (
      let x = Math.max(Math.ceil(a / size) * size, (ends.at(-1) ?? Number.NEGATIVE_INFINITY) + size, f + size);
      x <= Math.min(b, t);
      x += size
    )
      ends.push(x)
  // For each end, worked out once for every series: its bucket's slot, and its nearest hour (as an hour from fH and
  // as a slot), whose total the counters' samples start from.
  const endSlot = Int32Array.from(ends, (x) => (x - fH) / size - 1)
  const nearHour = Int32Array.from(ends, (x) => (Math.round(x / HOUR) * HOUR - fH) / HOUR)
  const nearSlot = Int32Array.from(nearHour, (k) => (k * HOUR) / size)
  // The running totals start at the first midnight when no sample's nearest hour is before it (as when the span
  // starts on a midnight, Grafana's start for a day's multiple of the step): the hours of the partial day before it
  // are then not read, and the total before it is a day's row a series.
  const firstHour = nearHour.reduce((m, k) => Math.min(m, k), hourSlots)
  const from = dayCount && fH + firstHour * HOUR >= d0 ? d0 : fH
  const edges = (dayCount ? [[from, d0] as const, [d1, tH] as const] : [[fH, tH] as const]).filter(([a, b]) => a < b)
  const [fine, edgeHours] = await Promise.all([
    rollupParts(sql, ids, fH, tH, size, undefined, zones, totalsAlongside(sql, counters, from, timescale)),
    Promise.all(counters.length ? edges.map(([a, b]) => rollupParts(sql, counterIds, a, b, HOUR)) : []),
  ])
  const bases = basesOf(fine)
  const blobDays = (id: string) => (fine.packedSize ? fine.stats.get(id)?.days : undefined)
  let lo = dayCount
  let hi = -1
  for (const id of counterIds)
    for (let k = 0; k < dayCount; k++)
      if (!blobDays(id)?.[k]) {
        lo = Math.min(lo, k)
        hi = Math.max(hi, k)
      }
  const middle = lo <= hi ? await rollupParts(sql, counterIds, d0 + lo * 86_400, d0 + (hi + 1) * 86_400, HOUR) : null
  const hourGrids = edgeHours.map((r, e) => ({
    of: grid(r, fH, HOUR, hourSlots),
    slots: [(edges[e][0] - fH) / HOUR, (edges[e][1] - fH) / HOUR] as const,
  }))
  const middleGrid = middle ? grid(middle, fH, HOUR, hourSlots) : null
  const out = new Map<string, Samples>()
  const dense = grid(fine, fH, size, (tH - fH) / size)
  const zoneSlots = zones.map(([a, b]): [number, number] => [(a - fH) / size, (b - fH) / size])
  // The running total at each hour from `from`: totals[k] is every point before fH + k hours.
  const totals = new Float64Array(hourSlots + 1)
  const hourly = new Float64Array(hourSlots)
  // Counters over held days, their totals starting at d0: their running sums at the ends.
  const whole = from === d0 && fine.packedSize ? wholeDayEnds(ends, size, d0, dayCount, fine.packedSize) : null
  for (const s of series) {
    const fromBlobs = whole && s.kind === 'counter' ? runningFromBlobs(fine.stats.get(s.id), whole, bases.get(s.id) ?? 0, arena) : null
    if (fromBlobs) {
      out.set(s.id, fromBlobs)
      continue
    }
    const { n, sum } = dense(s.id, zoneSlots)
    if (s.kind === 'counter') {
      const days = blobDays(s.id) ?? []
      for (let k = 0; k < dayCount && fine.packedSize; k++)
        if (days[k]) {
          // A loop rather than hourly.set: a typed array's set of 24 values cost as much as the slots' copy.
          const h = hoursOf(days[k]!, fine.packedSize)
          for (let u = 0, o = (d0 + k * 86_400 - fH) / HOUR; u < 24; u++) hourly[o + u] = h[u]
        }
      // The tail's minutes of the days with a blob (those of other hours come with the hourly reads).
      const rest = fine.stats.get(s.id)?.rest
      if (rest)
        for (let k = 0; k < rest.t.length; k++)
          if (rest.n[k] < 0 && days[Math.floor((rest.t[k] - d0) / 86_400)]) hourly[Math.floor((rest.t[k] - fH) / HOUR)] += rest.sum[k]
      for (const { of, slots } of hourGrids) {
        const h = of(s.id, [slots]).sum
        for (let k = slots[0]; k < slots[1]; k++) hourly[k] = h[k]
      }
      if (middleGrid) {
        const missing: Array<[number, number]> = []
        for (let d = lo; d <= hi; d++) if (!days[d]) missing.push([(d0 + d * 86_400 - fH) / HOUR, (d0 + (d + 1) * 86_400 - fH) / HOUR])
        const h = middleGrid(s.id, missing).sum
        for (const [k0, k1] of missing) for (let k = k0; k < k1; k++) hourly[k] = h[k]
      }
      const k0 = (from - fH) / HOUR
      totals[k0] = bases.get(s.id) ?? 0
      for (let k = k0; k < hourSlots; k++) totals[k + 1] = totals[k] + hourly[k]
    }
    out.set(s.id, zoneSamples(n, sum, ends, endSlot, s.kind === 'counter' ? { totals, nearHour, nearSlot } : null, arena))
  }
  return out
}

/**
 * Where each bucket end lies among the span's whole days (d0 + k days, k < dayCount), worked out once for every
 * series: its day k and the blob slot after the bucket's last. An end at or before d0 (its bucket in the day before,
 * among the rest's buckets) is day -1. Null when an end lies after the whole days (a span ending inside a day), or
 * when more than a few lie before them (each is worked out from the rest's buckets one by one).
 */
function wholeDayEnds(ends: readonly number[], size: number, d0: number, dayCount: number, ps: number) {
  const day = new Int32Array(ends.length)
  const pos = new Int32Array(ends.length)
  let early = 0
  for (let e = 0; e < ends.length; e++) {
    const k = Math.max(-1, Math.floor((ends[e] - size - d0) / 86_400))
    if (k >= dayCount || (k < 0 && ++early > 4)) return null
    day[e] = k
    pos[e] = k < 0 ? 0 : (ends[e] - d0 - k * 86_400) / ps
  }
  const ms = Float64Array.from(ends, (x) => x * 1000)
  return { ends, ms, day, pos, last: day.reduce((m, k) => Math.max(m, k), -1), per: size / ps, d0, d1: d0 + dayCount * 86_400, size }
}

type WholeDayEnds = NonNullable<ReturnType<typeof wholeDayEnds>>

/**
 * A counter's samples at bucket ends straight from its held days' running sums (runningOf): its total before d0
 * (`base`), the days' totals before the end's day, and the day's running sum at the end; an end before d0 from the
 * rest's buckets between it and d0. Null when the series cannot be read so (a day up to the last end without a blob,
 * or rest buckets inside the whole days: the tail's minutes not folded yet): the zones' grid answers then. The same
 * totals as the grid's, added up in another order.
 *
 * Why: with the days held, laying out the zones' slots and hours to add them up was most of a read's own time (a
 * week's `sum(rate(x[5m]))` at an hour's step over 100 series: 1.9 ms of a 6 ms query, against 1.1 here).
 */
function runningFromBlobs(parts: StatParts | undefined, w: WholeDayEnds, base: number, arena: Arena): Samples | null {
  const days = parts?.days ?? []
  const rest = parts?.rest
  if (rest) for (let r = 0; r < rest.t.length; r++) if (rest.t[r] >= w.d0 && rest.t[r] < w.d1) return null
  const before = new Float64Array(w.last + 1)
  let total = base
  for (let k = 0; k <= w.last; k++) {
    const day = days[k]
    if (!day) return null
    before[k] = total
    total += runningOf(day).total
  }
  // The times are the ends' own (shared by every series) until a bucket without points is left out.
  let ts: Float64Array | null = null
  const vs = arena.take(w.ends.length)
  let m = 0
  // The ends are in time order: a day's arrays are looked up once.
  let dayOf = -1
  let sums = EMPTY
  let counted = NONE
  for (let e = 0; e < w.ends.length; e++) {
    const k = w.day[e]
    let value: number
    if (k < 0) {
      // An end at or before d0: its bucket's count, and the total at d0 less the buckets from the end to d0.
      let n = 0
      value = base
      for (let r = 0; rest && r < rest.t.length; r++) {
        const t = rest.t[r]
        if (t >= w.ends[e] - w.size && t < w.ends[e]) n += Math.abs(rest.n[r])
        if (t >= w.ends[e] && t < w.d0) value -= rest.sum[r]
      }
      if (n === 0) {
        ts ??= ownTimes(w.ms, m, arena)
        continue
      }
    } else {
      if (k !== dayOf) {
        ;({ sums, counted } = runningOf(days[k]!))
        dayOf = k
      }
      const j = w.pos[e]
      let has = 0
      for (let u = 1; u <= w.per; u++) has |= counted[j - u]
      if (!has) {
        ts ??= ownTimes(w.ms, m, arena)
        continue
      }
      value = before[k] + sums[j]
    }
    if (ts) ts[m] = w.ms[e]
    vs[m++] = value
  }
  return { t: ts ? ts.subarray(0, m) : w.ms, v: vs.subarray(0, m), unit: 'ms' }
}

const EMPTY: Float64Array = new Float64Array(0)
const NONE: Uint8Array = new Uint8Array(0)

/** A series' own times: the first m of the ends' (ms), the rest to be written as its samples are. */
function ownTimes(ms: Float64Array, m: number, arena: Arena): Float64Array {
  const ts = arena.take(ms.length)
  ts.set(ms.subarray(0, m))
  return ts
}

/**
 * A held day's running sums by slot (sums[j]: the slots before j), which slots hold points, and its total: once, and
 * kept with it. Apart from the slots, and small: a month of 100 series' slots are several megabytes, and reading
 * the ends' counts and sums from them cost a cache miss an end.
 */
function runningOf(day: DayBuckets): NonNullable<DayBuckets['running']> {
  if (day.running) return day.running
  const slots = day.slots.length >> 1
  const sums = new Float64Array(slots + 1)
  const counted = new Uint8Array(slots)
  for (let j = 0; j < slots; j++) {
    sums[j + 1] = sums[j] + day.slots[2 * j + 1]
    counted[j] = day.slots[2 * j] > 0 ? 1 : 0
  }
  day.running = { sums, counted, total: sums[slots] }
  return day.running
}

/**
 * A series' samples at the stretches' bucket ends (seconds; endSlot their buckets' slots in the zones' grid), in
 * typed arrays of milliseconds as samplesOf's: a gauge's bucket mean (hours null); a counter's running total at the
 * end from its nearest hour's, the buckets between added or taken away. A function of its own, as fromDays is.
 */
function zoneSamples(
  n: Float64Array,
  sum: Float64Array,
  ends: readonly number[],
  endSlot: Int32Array,
  hours: { totals: Float64Array; nearHour: Int32Array; nearSlot: Int32Array } | null,
  arena: Arena,
): Samples {
  const ts = arena.take(ends.length)
  const vs = arena.take(ends.length)
  let m = 0
  for (let e = 0; e < ends.length; e++) {
    const i = endSlot[e]
    if (n[i] === 0) continue
    ts[m] = ends[e] * 1000
    if (!hours) {
      vs[m++] = sum[i] / n[i]
      continue
    }
    let total = hours.totals[hours.nearHour[e]]
    const near = hours.nearSlot[e]
    for (let j = i + 1; j < near; j++) total -= sum[j]
    for (let j = near; j < i + 1; j++) total += sum[j]
    vs[m++] = total
  }
  return { t: ts.subarray(0, m), v: vs.subarray(0, m), unit: 'ms' }
}

/**
 * A series' samples from its grid of buckets (each slot's end its time, in milliseconds): a counter's running total
 * from `base`, a gauge's mean (base null). Typed arrays of the buckets' size, from the query's arena: arrays grown a
 * push at a time were most of a week of 5-minute buckets' garbage (100 series, 200,000 samples), and typed arrays of
 * their own a tenth of its time (arena.ts). A function of its own, as fromDays is.
 */
function samplesOf(n: Float64Array, sum: Float64Array, f: number, size: number, base: number | null, arena: Arena): Samples {
  const slots = n.length
  const t = arena.take(slots)
  const v = arena.take(slots)
  let k = 0
  if (base === null) {
    for (let i = 0; i < slots; i++) {
      if (n[i] === 0) continue
      t[k] = (f + (i + 1) * size) * 1000
      v[k++] = sum[i] / n[i]
    }
  } else {
    let total = base
    for (let i = 0; i < slots; i++) {
      total += sum[i]
      if (n[i] === 0) continue
      t[k] = (f + (i + 1) * size) * 1000
      v[k++] = total
    }
  }
  return { t: t.subarray(0, k), v: v.subarray(0, k), unit: 'ms' }
}

/**
 * A series' buckets laid out a slot of `size` seconds each from f, point counts and sums (0 where there are none),
 * in arrays reused from one series to the next (a month of minutes is 43,200 slots, and a pair of them for each of a
 * thousand series would hold 700 MB at once). Only the slot ranges asked for are set: the zones' alone of a month
 * of five-minute slots. Whole days are copied from their blobs' slots, a stretch at a time where the slots are the
 * blobs' own; the rest's buckets (partial days, days without a blob, the tail) are then added in, the rollup's before
 * the tail's, as the chart read adds them.
 */
function grid(read: RolledUp, f: number, size: number, slots: number) {
  const n = new Float64Array(slots)
  const sum = new Float64Array(slots)
  const { d0, packedSize: ps, stats } = read
  return (id: string, ranges: ReadonlyArray<readonly [number, number]>): { n: Float64Array; sum: Float64Array } => {
    const p = stats.get(id)
    if (p && ps) fromDays(p.days, d0, ps, f, size, ranges, n, sum)
    else
      for (let r = 0; r < ranges.length; r++) {
        n.fill(0, ranges[r][0], ranges[r][1])
        sum.fill(0, ranges[r][0], ranges[r][1])
      }
    const rest = p?.rest
    if (rest)
      for (const tail of [false, true])
        for (let k = 0; k < rest.t.length; k++) {
          if (rest.n[k] < 0 !== tail) continue
          const i = Math.floor((rest.t[k] - f) / size)
          if (i < 0 || i >= slots) continue
          n[i] += Math.abs(rest.n[k])
          sum[i] += rest.sum[k]
        }
    return { n, sum }
  }
}

/** A held day's hours: its slots (of ps seconds) added up an hour at a time, once, and kept with it. */
function hoursOf(day: DayBuckets, ps: number): Float64Array {
  if (day.hours) return day.hours
  const hours = new Float64Array(24)
  const per = HOUR / ps
  for (let h = 0, j = 0; h < 24; h++) {
    let sum = 0
    for (let u = 0; u < per; u++, j++) sum += day.slots[2 * j + 1]
    hours[h] = sum
  }
  day.hours = hours
  return hours
}

/**
 * The slot ranges [s0, s1) (of `size` seconds from f) from the whole days' slots (of ps seconds, which divides size):
 * each slot's buckets added up, 0 where no day's blob holds them. A function of its own: in the closure made per read
 * its loops cost about twice as much; and all the ranges in one call, as the zones of a month at an hour's step are
 * 720 ranges of a slot or two a series.
 */
function fromDays(
  days: ReadonlyArray<DayBuckets | undefined>,
  d0: number,
  ps: number,
  f: number,
  size: number,
  ranges: ReadonlyArray<readonly [number, number]>,
  n: Float64Array,
  sum: Float64Array,
): void {
  const per = size / ps
  for (let r = 0; r < ranges.length; r++) {
    // By index: destructuring the pair cost as much as copying its slots.
    const s1 = ranges[r][1]
    for (let i = ranges[r][0]; i < s1; ) {
      const x = f + i * size
      const k = Math.floor((x - d0) / 86_400)
      const day = k >= 0 && k < days.length ? days[k] : undefined
      const start = d0 + k * 86_400
      // The slots from i that lie inside this day: a slot across midnight is taken a bucket at a time, below.
      const i1 = Math.min(s1, Math.floor((start + 86_400 - f) / size))
      if (i1 > i && !day) {
        n.fill(0, i, i1)
        sum.fill(0, i, i1)
      } else if (i1 > i && per === 1) {
        const slots = day!.slots
        for (let q = i, j = 2 * ((x - start) / ps); q < i1; q++, j += 2) {
          n[q] = slots[j]
          sum[q] = slots[j + 1]
        }
      } else if (i1 > i)
        for (let q = i, j = 2 * ((x - start) / ps), slots = day!.slots; q < i1; q++) {
          let a = 0
          let b = 0
          for (let u = 0; u < per; u++, j += 2) {
            a += slots[j]
            b += slots[j + 1]
          }
          n[q] = a
          sum[q] = b
        }
      else {
        let a = 0
        let b = 0
        for (let u = 0; u < per; u++) {
          const y = x + u * ps
          const ky = Math.floor((y - d0) / 86_400)
          const dy = ky >= 0 && ky < days.length ? days[ky] : undefined
          if (!dy) continue
          a += dy.slots[(2 * (y - d0 - ky * 86_400)) / ps]
          b += dy.slots[(2 * (y - d0 - ky * 86_400)) / ps + 1]
        }
        n[i] = a
        sum[i] = b
      }
      i = Math.max(i1, i + 1)
    }
  }
}

/**
 * The zones of buckets that the samples inside the stretches need, as [from, to) seconds on multiples of
 * `size`: each sample's own bucket and, for counters, the buckets between it and its nearest hour. Null when they
 * would cover most of the span anyway (windows as long as the step): the whole span is read then.
 */
function zonesOf(
  stretches: ReadonlyArray<readonly [number, number]>,
  size: number,
  f: number,
  t: number,
  counters: boolean,
): Array<[number, number]> | null {
  const zones: Array<[number, number]> = []
  let covered = 0
  const nearestHour = (x: number) => Math.round(x / HOUR) * HOUR
  for (const [a, b] of stretches) {
    const first = Math.max(Math.ceil(a / size) * size, f + size)
    const last = Math.min(Math.floor(b / size) * size, t)
    if (first > last) continue
    let from = first - size
    let to = last
    if (counters) {
      from = Math.min(from, nearestHour(first))
      to = Math.max(to, nearestHour(last))
    }
    const prev = zones[zones.length - 1]
    if (prev && from <= prev[1]) {
      covered += Math.max(0, to - prev[1])
      prev[1] = Math.max(prev[1], to)
    } else {
      zones.push([from, to])
      covered += to - from
    }
  }
  return covered * 2 <= t - f ? zones : null
}

/**
 * Each counter's total of every point before `start`, the running total's starting value, for raw reads: the
 * totals before `start`'s minute (totalsStatement), then the raw points of that minute before `start`. Reads over
 * rollups take the same statement alongside their buckets instead (totalsAlongside).
 */
async function totalsBefore(sql: Db, counters: Series[], start: number): Promise<Map<string, number>> {
  const ids = counters.map((s) => s.id)
  const minute = Math.floor(start / 60) * 60
  const rows = await sql<{ stat_id: string; total: number }[]>`${totalsStatement(sql, ids, minute, await usesTimescale(sql))}`
  const out = new Map<string, number>(rows.map((r) => [r.stat_id, r.total]))
  if (start > minute) {
    const tail = await readRaw(sql, ids, minute, start)
    for (const [id, { t, v }] of tail) {
      let sum = out.get(id) ?? 0
      for (let i = 0; i < t.length && t[i] < start; i++) sum += v[i]
      out.set(id, sum)
    }
  }
  return out
}

/**
 * The statement of each counter's total before a whole minute, (stat_id, total) a stat with points before it: whole
 * days from rollups_1d up to the midnight nearest the hour nearest the minute, the hours between that midnight and
 * that hour from rollups_1h, the minutes between that hour and the minute from rollups_1m, each added when it lies
 * before the boundary it leads to and taken away when after; then (on plain PostgreSQL) the minutes not folded yet,
 * rollup_pending. So a year of history is a few hundred rows a series, and a span starting at 23:55 (as Grafana
 * aligns a step of five minutes) reads a day's row and five minutes' rather than 23 hours and 55 minutes (most of the
 * statement's time).
 *
 * Taking away is exact only where the tiers hold the same points: plain PostgreSQL folds every tier in one statement
 * (rollups.ts). TimescaleDB's continuous aggregates refresh a tier at a time, so there the boundaries are the ones
 * before the minute and every tier is added.
 */
function totalsStatement(sql: Db, ids: string[], minute: number, timescale: boolean) {
  const nearest = timescale ? Math.floor : Math.round
  const hour = nearest(minute / 3600) * 3600
  const day = nearest(hour / 86_400) * 86_400
  // A tier's buckets between two boundaries, added (from before to) or taken away (from after to); nothing when
  // the boundaries meet (a span starting on the hour has no minutes to scan: scanning the minutes' index for each
  // stat to find none was a fifth of the statement).
  const between = (table: 'rollups_1h' | 'rollups_1m', from: number, to: number) =>
    from === to
      ? sql``
      : sql`union all select stat_id, ${from < to ? sql`sum` : sql`-sum`} from ${sql(table)}
          where stat_id = any(${ids}::uuid[]) and bucket >= ${at(Math.min(from, to))} and bucket < ${at(Math.max(from, to))}`
  const pending = timescale
    ? sql``
    : sql`union all select stat_id, sum from rollup_pending where stat_id = any(${ids}::uuid[]) and bucket < ${at(minute)}`
  return sql`
    select stat_id, sum(sum) as total from (
      select stat_id, sum from rollups_1d where stat_id = any(${ids}::uuid[]) and bucket < ${at(day)}
      ${between('rollups_1h', day, hour)}
      ${between('rollups_1m', hour, minute)}
      ${pending}
    ) x group by stat_id`
}

/**
 * The counters' totals before `start` (a whole minute) as rollupParts' rows alongside its buckets: read by the same
 * statement, they come back in StatParts.alongside, and basesOf takes them out.
 */
function totalsAlongside(sql: Db, counters: Series[], start: number, timescale: boolean): Alongside | undefined {
  if (!counters.length) return undefined
  const isCounter = new Set(counters.map((s) => s.id))
  return (list) => {
    const ids = list.filter((id) => isCounter.has(id))
    return ids.length
      ? sql`select stat_id, null::float8, 'alongside', total::text from (${totalsStatement(sql, ids, start, timescale)}) t`
      : null
  }
}

/** Each counter's total before the span, from the rows totalsAlongside had read with the buckets. */
function basesOf(read: RolledUp): Map<string, number> {
  const out = new Map<string, number>()
  for (const [id, p] of read.stats) if (p.alongside !== undefined) out.set(id, Number(p.alongside))
  return out
}
