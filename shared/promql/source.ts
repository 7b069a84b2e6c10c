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
// multiple of a minute) read as the charts read theirs (shared/stats/read.ts, readBucketsMany: the coarsest rollup
// table whose size divides the bucket, grouped to the bucket in SQL, all series in one statement). A bucket is one
// sample at its end: a gauge's mean over the bucket, a counter's running total at the bucket's end.
import type { Db } from '../db.js'
import { decodeBlock, mergeByTime, type BlockColumns, type Row } from '../points/blocks.js'
import { usesTimescale } from '../points/storage.js'
import { readBucketsMany } from '../stats/read.js'
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

/** One sample: seconds since the epoch (fractions allowed) and the value. */
export interface Sample {
  t: number
  v: number
}

/** 0 for raw points, else the size in seconds of the buckets read (a multiple of 60). */
export type Resolution = number

export interface SeriesSource {
  /** Every series of the account whose labels satisfy all the matchers (start/end: seconds, advisory). */
  selectSeries(accountId: string, matchers: Matcher[], start?: number, end?: number): Promise<Series[]>
  /** Each series' samples with start <= t <= end, in time order, at the resolution asked for. */
  readSamples(series: Series[], start: number, end: number, resolution: Resolution): Promise<Map<string, Sample[]>>
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
            or exists (select 1 from rollups_1d x where x.stat_id = s.id))
        order by s.name, s.tags::text nulls first`,
      )
      const out: Series[] = []
      for (const r of rows) {
        const labels: Labels = { ...r.tags, __name__: r.name }
        if (matchers.every((m) => matches(labels, m))) out.push({ id: r.id, labels, kind: r.kind, unit: r.unit, help: r.description })
      }
      return out
    },

    async readSamples(series, start, end, resolution) {
      const out = new Map<string, Sample[]>(series.map((s) => [s.id, []]))
      if (!series.length) return out
      const counters = series.filter((s) => s.kind === 'counter')
      // A rollup sample covers its whole bucket: the total before the first bucket read, not before `start`.
      const baseAt = resolution ? Math.ceil(start / resolution) * resolution - resolution : start
      // The samples and the counters' starting totals: two statements, on two connections at once.
      const [read, bases] = await Promise.all([
        resolution === 0
          ? run((sql) =>
              readRaw(
                sql,
                series.map((s) => s.id),
                start,
                end,
              ),
            )
          : run((sql) => readRollups(sql, series, start, end, resolution)),
        counters.length ? run((sql) => totalsBefore(sql, counters, baseAt)) : Promise.resolve(new Map<string, number>()),
      ])
      for (const s of series) {
        const samples = read.get(s.id) ?? []
        if (s.kind === 'counter') {
          let total = bases.get(s.id) ?? 0
          for (const p of samples) p.v = total += p.v
        }
        out.set(s.id, samples)
      }
      return out
    },
  }
}

const at = (seconds: number) => new Date(seconds * 1000)

/** Raw points with start <= t <= end from both the hot rows and the day blocks (sql/0027, 0032). */
async function readRaw(sql: Db, ids: string[], start: number, end: number): Promise<Map<string, Sample[]>> {
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
  const runs = new Map<string, Row[][]>()
  const runsOf = (id: string) => {
    let r = runs.get(id)
    if (!r) runs.set(id, (r = []))
    return r
  }
  let hot: Row[] = []
  let hotId = ''
  for (const r of rows) {
    if (r.stat_id !== hotId) {
      if (hot.length) runsOf(hotId).push(hot)
      hot = []
      hotId = r.stat_id
    }
    hot.push({ us: r.us, value: r.value })
  }
  if (hot.length) runsOf(hotId).push(hot)
  // Blocks of one day may overlap (write blocks not yet compacted); blocks of different days do not.
  for (const b of blocks) runsOf(b.stat_id).push(decodeBlock(b, start * 1_000_000, end * 1_000_000 + 1))
  const out = new Map<string, Sample[]>()
  for (const [id, list] of runs)
    out.set(
      id,
      mergeByTime(list).map((r) => ({ t: Number(r.us) / 1_000_000, v: r.value })),
    )
  return out
}

/**
 * Buckets of `size` seconds as samples at each bucket's end: counters' sums (made running totals by the caller),
 * gauges' means. The charts' read (readBucketsMany): hours from rollups_1h when `size` is whole hours, days from
 * rollups_1d when whole days, else minutes grouped to `size` in SQL; the newest partial hour or day from minutes.
 */
async function readRollups(sql: Db, series: Series[], start: number, end: number, size: number): Promise<Map<string, Sample[]>> {
  const from = Math.floor(start / size) * size - size
  const buckets = await readBucketsMany(
    sql,
    series.map((s) => ({ id: s.id, kind: s.kind })),
    { requested: 'promql', from: at(from), to: at(Math.floor(end / size) * size), bucketSeconds: size },
  )
  const out = new Map<string, Sample[]>()
  for (const [id, list] of buckets) {
    const samples: Sample[] = []
    for (const b of list) {
      const t = b.t + size
      if (t >= start && t <= end) samples.push({ t, v: b.value })
    }
    out.set(id, samples)
  }
  return out
}

/**
 * Each counter's total of every point before `start`: the running total's starting value. One statement: whole
 * days from rollups_1d, then whole hours from rollups_1h, then minutes from rollups_1m (and, on plain PostgreSQL,
 * the minutes not folded yet, rollup_pending), so a year of history is a few hundred rows a series; then the raw
 * points of the last partial minute, when `start` is inside one.
 */
async function totalsBefore(sql: Db, counters: Series[], start: number): Promise<Map<string, number>> {
  const ids = counters.map((s) => s.id)
  const minute = Math.floor(start / 60) * 60
  const hour = Math.floor(minute / 3600) * 3600
  const day = Math.floor(minute / 86_400) * 86_400
  const pending = (await usesTimescale(sql))
    ? sql``
    : sql`union all select stat_id, sum from rollup_pending where stat_id = any(${ids}::uuid[]) and bucket < ${at(minute)}`
  const rows = await sql<{ stat_id: string; total: number }[]>`
    select stat_id, sum(sum) as total from (
      select stat_id, sum from rollups_1d where stat_id = any(${ids}::uuid[]) and bucket < ${at(day)}
      union all
      select stat_id, sum from rollups_1h where stat_id = any(${ids}::uuid[]) and bucket >= ${at(day)} and bucket < ${at(hour)}
      union all
      select stat_id, sum from rollups_1m where stat_id = any(${ids}::uuid[]) and bucket >= ${at(hour)} and bucket < ${at(minute)}
      ${pending}
    ) x group by stat_id`
  const out = new Map<string, number>(rows.map((r) => [r.stat_id, r.total]))
  if (start > minute) {
    const tail = await readRaw(sql, ids, minute, start)
    for (const [id, samples] of tail) out.set(id, (out.get(id) ?? 0) + samples.filter((p) => p.t < start).reduce((a, p) => a + p.v, 0))
  }
  return out
}
