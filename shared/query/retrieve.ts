// Retrieval for answers: the chart reads (readBucketsMany over the rollups and
// their not-yet-folded tail), never a scan of raw points. The one exception is
// a stat's latest value, one index seek on (stat_id, ts) as the dashboard does.
import type { Db } from '../db.js'
import { readBucketsMany, type Bucket } from '../stats/read.js'
import { Clock } from '../time/clock.js'
import type { StatRef } from './match.js'
import type { Span } from './periods.js'

export interface Summary {
  /** Counters: the sum. Gauges: the mean of all observations. Null when nothing was recorded. */
  value: number | null
  sum: number
  min: number | null
  max: number | null
  n: number
}

/** The account's stats (id, name, kind), by name. */
export async function accountStats(sql: Db, accountId: string): Promise<StatRef[]> {
  const [stats, series] = await Promise.all([
    sql<StatRef[]>`select id, name, kind from stats where account_id = ${accountId} and parent_id is null order by name`,
    sql<{ id: string; parent_id: string; tags: Record<string, string> }[]>`
      select id, parent_id, tags from stats where account_id = ${accountId} and parent_id is not null order by tags::text`,
  ])
  // A stat with tagged series is read as a whole, all of them with its own row (docs/decisions.md §24).
  const byId = new Map(stats.map((s) => [s.id, s]))
  for (const r of series) {
    const s = byId.get(r.parent_id)
    if (!s) continue
    s.series ??= [s.id]
    s.series.push(r.id)
    ;(s.tagged ??= []).push({ id: r.id, tags: r.tags })
  }
  return stats
}

/** The ids a stat's answer reads: its series (all, or those a filter kept), or its own id. */
export const idsOfStat = (stat: StatRef): string[] => stat.series ?? [stat.id]

/**
 * A window cut where it reaches a whole hour and a whole day, each piece read at the coarsest rollup its
 * start sits on (never above `maxBucket`): a chart read covers [from, to) exactly only when `from` is on
 * its bucket, and "the last 30 days" should not read 43,200 minute rows when 30 daily ones will do.
 */
function pieces(span: Span, maxBucket: number): Array<{ from: Date; to: Date; b: number }> {
  const to = span.to.getTime() / 1000
  let cur = span.from.getTime() / 1000
  if (cur % 60 !== 0) throw new Error(`window start ${span.from.toISOString()} is not on a whole minute`)
  let b = 60
  const out: Array<{ from: Date; to: Date; b: number }> = []
  for (const size of [3_600, 86_400]) {
    if (size > maxBucket) break
    const next = Math.ceil(cur / size) * size
    if (next >= to) break
    if (next > cur) out.push({ from: new Date(cur * 1000), to: new Date(next * 1000), b })
    cur = next
    b = size
  }
  out.push({ from: new Date(cur * 1000), to: span.to, b })
  return out
}

/** Buckets of several stats over a window, read piece by piece (see pieces); bucket sizes vary along the window. */
async function read(sql: Db, stats: StatRef[], span: Span, maxBucket: number): Promise<Map<string, Bucket[]>> {
  const parts = await Promise.all(
    pieces(span, maxBucket).map((p) => readBucketsMany(sql, stats, { requested: 'custom', from: p.from, to: p.to, bucketSeconds: p.b })),
  )
  return new Map(stats.map((s) => [s.id, parts.flatMap((m) => m.get(s.id) ?? [])]))
}

/** Totals of several stats over one window (counters sum, gauges mean, min, max, observations). */
export async function summarise(sql: Db, stats: StatRef[], span: Span): Promise<Map<string, Summary>> {
  const buckets = await read(sql, stats, span, 86_400)
  const out = new Map<string, Summary>()
  for (const s of stats) {
    const bs = buckets.get(s.id) ?? []
    const n = bs.reduce((a, b) => a + b.n, 0)
    if (s.kind === 'counter') {
      const sum = bs.reduce((a, b) => a + b.value, 0)
      out.set(s.id, { value: n ? sum : null, sum, min: null, max: null, n })
    } else {
      const gs = bs as Array<Extract<Bucket, { min: number }>>
      const sum = gs.reduce((a, b) => a + b.value * b.n, 0)
      out.set(s.id, {
        value: n ? sum / n : null,
        sum,
        n,
        min: n ? Math.min(...gs.map((b) => b.min)) : null,
        max: n ? Math.max(...gs.map((b) => b.max)) : null,
      })
    }
  }
  return out
}

export interface Slot {
  /** Unix seconds of the slot's start. */
  t: number
  /** Counter: the slot's sum. Gauge: its mean. */
  value: number
  min: number
  max: number
  n: number
  /** Whether the whole slot lies inside the window. */
  complete: boolean
}

/** The slot size for finding a peak: minutes up to 3 hours, hours up to 3 days, days beyond. */
export function peakSlot(span: Span): number {
  const s = (span.to.getTime() - span.from.getTime()) / 1000
  return s <= 3 * 3_600 ? 60 : s <= 3 * 86_400 ? 3_600 : 86_400
}

/**
 * One stat's window in slots of `slot` seconds on the wall clock of `zone` (its minutes, hours or days; UTC's
 * by default). Counter slots without points read 0 once the stat has begun in the window; gauge slots
 * without points are left out.
 */
export async function slots(sql: Db, stat: StatRef, span: Span, slot: number, zone = 'UTC'): Promise<Slot[]> {
  const clock = new Clock(zone)
  const fromS = span.from.getTime() / 1000
  const toS = span.to.getTime() / 1000
  // Read at the largest rollup that fits inside the zone's slots (the slot itself in UTC), finer at the
  // window's ragged start, and group here.
  const buckets = (await read(sql, [stat], span, clock.finestFit(fromS, toS, slot))).get(stat.id) ?? []
  const bySlot = new Map<number, Slot>()
  const starts = new Map<number, number>()
  const complete = (t: number) => t >= fromS && clock.nextSlot(t, slot) <= toS
  for (const x of buckets) {
    let t = starts.get(x.t)
    if (t === undefined) starts.set(x.t, (t = clock.slotStart(x.t, slot)))
    const min = 'min' in x ? x.min : x.value
    const max = 'max' in x ? x.max : x.value
    const sum = stat.kind === 'counter' ? x.value : x.value * x.n
    const cur = bySlot.get(t)
    if (!cur) bySlot.set(t, { t, value: sum, min, max, n: x.n, complete: complete(t) })
    else Object.assign(cur, { value: cur.value + sum, min: Math.min(cur.min, min), max: Math.max(cur.max, max), n: cur.n + x.n })
  }
  const out = [...bySlot.values()].sort((a, b) => a.t - b.t)
  if (stat.kind === 'gauge') return out.map((s) => ({ ...s, value: s.value / s.n }))
  if (!out.length) return out
  // Counters: a slot without points after the first one is a real 0.
  const filled: Slot[] = []
  for (let t = out[0].t; t < toS; t = clock.nextSlot(t, slot)) {
    filled.push(bySlot.get(t) ?? { t, value: 0, min: 0, max: 0, n: 0, complete: complete(t) })
  }
  return filled
}

/** A stat's newest observation (within the window when one is given); several at one second are merged as reads merge them. */
export async function latest(sql: Db, stat: StatRef, span: Span | null): Promise<{ t: number; value: number; n: number } | null> {
  // Hot rows and day blocks alike (sql/0027): the newest time first, then every point at it.
  const [from, to] = span
    ? [sql`${span.from}::timestamptz`, sql`${span.to}::timestamptz`]
    : [sql`'-infinity'::timestamptz`, sql`'infinity'::timestamptz`]
  // A stat with tagged series: the newest time over all of them, then every point at it (as a read merges them).
  const ids = idsOfStat(stat)
  const [row] = await sql<{ t: number; sum: number; avg: number; n: number }[]>`
    with newest as (select max(stat_newest(i, ${from}, ${to})) as ts from unnest(${ids}::uuid[]) i)
    select extract(epoch from p.ts)::bigint::float8 as t, sum(p.value) as sum, avg(p.value) as avg, count(*)::int as n
    from newest cross join unnest(${ids}::uuid[]) i cross join lateral stat_points(i, newest.ts, newest.ts + interval '1 microsecond') p
    where newest.ts is not null
    group by p.ts`
  return row ? { t: row.t, value: stat.kind === 'counter' ? row.sum : row.avg, n: row.n } : null
}
