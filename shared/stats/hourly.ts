// Dense hourly series for the analyses that compare hours (anomaly detection,
// correlations): the chart read's buckets (readBucketsMany) at one hour, laid
// out one slot per hour. A counter's hour without points is a real 0 once the
// stat has begun; a gauge's is unknown (null), since a gauge that was not
// sampled did not read zero.
import type postgres from 'postgres'
import type { Db } from '../db.js'
import type { Kind } from './repo.js'
import { usesTimescale } from '../points/storage.js'
import { dayCache, type DayBuckets } from './day-cache.js'

export const HOUR = 3_600

export interface HourlySeries {
  /** Unix seconds of the first slot (aligned to the hour). */
  from: number
  /** One value per hour from `from`: counters sum, gauges mean; null where unknown. */
  values: Array<number | null>
  /** Points per hour (0 where none). */
  counts: number[]
}

/**
 * Hourly series of several stats over [from, to) (both aligned down to the hour, so a
 * `to` of now leaves the incomplete current hour out). Counter hours before the
 * stat's first point (its first non-empty hour in the window, or `since` when the
 * caller knows an earlier start) are null, so "not yet begun" is not read as zero.
 */
export async function readHourly(
  sql: Db,
  stats: Array<{ id: string; kind: Kind; since?: Date; series?: readonly string[] }>,
  from: Date,
  to: Date,
): Promise<Map<string, HourlySeries>> {
  const f = Math.floor(from.getTime() / 1000 / HOUR) * HOUR
  const t = Math.floor(to.getTime() / 1000 / HOUR) * HOUR
  const slots = Math.max(0, (t - f) / HOUR)
  const out = new Map<string, HourlySeries>()
  // `series`: the ids read as the one series under `id` (a stat and its tagged series, docs/decisions.md §24).
  const several = stats.some((s) => s.series && (s.series.length !== 1 || s.series[0] !== s.id))
  const rows =
    stats.length && slots
      ? await rollupArrays(
          sql,
          stats.flatMap((s) => s.series ?? [s.id]),
          f,
          t,
          HOUR,
          several ? stats.flatMap((s) => (s.series ?? [s.id]).map(() => s.id)) : undefined,
        )
      : []
  const byId = new Map(rows.map((r) => [r.stat_id, r]))
  for (const s of stats) {
    const values: Array<number | null> = new Array(slots).fill(null)
    const counts: number[] = new Array(slots).fill(0)
    const r = byId.get(s.id)
    if (r) {
      for (let k = 0; k < r.h.length; k++) {
        const i = r.h[k]
        if (i < 0 || i >= slots) continue
        values[i] = s.kind === 'counter' ? r.sum[k] : r.sum[k] / r.n[k]
        counts[i] = r.n[k]
      }
    }
    if (s.kind === 'counter') {
      const firstFilled = values.findIndex((v) => v !== null)
      const sinceSlot = s.since ? Math.ceil((Math.floor(s.since.getTime() / 1000 / HOUR) * HOUR - f) / HOUR) : Infinity
      const start = Math.max(0, Math.min(firstFilled < 0 ? Infinity : firstFilled, sinceSlot))
      for (let i = start; i < slots; i++) if (values[i] === null) values[i] = 0
    }
    out.set(s.id, { from: f, values, counts })
  }
  return out
}

/** A stat's rolled-up buckets, with its pending tail's (slot -1 - h) added in: the rollup's part first, as the chart read adds them. */
function addTail(r: BucketArrays): BucketArrays {
  const out = { stat_id: r.stat_id, h: [] as number[], n: [] as number[], sum: [] as number[] }
  const at = new Map<number, number>()
  for (let k = 0; k < r.h.length; k++) {
    const h = r.h[k]
    if (h < 0) continue
    at.set(h, out.h.length)
    out.h.push(h)
    out.n.push(r.n[k])
    out.sum.push(r.sum[k])
  }
  for (let k = 0; k < r.h.length; k++) {
    const code = r.h[k]
    if (code >= 0) continue
    const h = -1 - code
    const i = at.get(h)
    if (i === undefined) {
      out.h.push(h)
      out.n.push(r.n[k])
      out.sum.push(r.sum[k])
    } else {
      out.n[i] += r.n[k]
      out.sum[i] += r.sum[k]
    }
  }
  return out
}

/**
 * Buckets packed 24 bytes each (rollupArrays, sql/0050: timestamptz_send, int8send, float8send), sent as base64, as
 * columns: start in seconds since the epoch, count, sum.
 */
function unpackBuckets(text: string): Pick<DayBuckets, 't' | 'n' | 'sum'> {
  const b = Buffer.from(text, 'base64')
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const m = b.byteLength / 24
  const out = { t: new Float64Array(m), n: new Float64Array(m), sum: new Float64Array(m) }
  for (let k = 0, o = 0; k < m; k++, o += 24) {
    // Microseconds since 2000-01-01 and the count, int8s read as two halves (both well inside 2^53).
    out.t[k] = (view.getInt32(o) * 4_294_967_296 + view.getUint32(o + 4)) / 1_000_000 + 946_684_800
    out.n[k] = view.getInt32(o + 8) * 4_294_967_296 + view.getUint32(o + 12)
    out.sum[k] = view.getFloat64(o + 16)
  }
  return out
}

/**
 * Buckets i0 to i1 - 1 of a part (unpackBuckets' columns) into `out` from index k, each with its slot of `size`
 * seconds from f (-1 - slot for the tail's, whose counts come negated); returns the next index. A function of its
 * own, not a closure made in each read, in which the loop cost 26 ns a bucket.
 */
function slotted(
  part: Pick<DayBuckets, 't' | 'n' | 'sum'>,
  i0: number,
  i1: number,
  f: number,
  size: number,
  out: { h: Int32Array; n: Float64Array; sum: Float64Array },
  k: number,
): number {
  const { t, n: counts, sum } = part
  const { h, n: outN, sum: outSum } = out
  for (let i = i0; i < i1; i++, k++) {
    const n = counts[i]
    const slot = Math.floor((t[i] - f) / size)
    h[k] = n < 0 ? -1 - slot : slot
    outN[k] = n < 0 ? -n : n
    outSum[k] = sum[i]
  }
  return k
}

/** A read with JIT compilation off: in a transaction of its own, or in the caller's (for the rest of it). */
async function withoutJit<T>(sql: Db, read: (tx: Db) => Promise<T>): Promise<T> {
  if (!('begin' in sql)) {
    await sql`set local jit = off`
    return read(sql)
  }
  return (await sql.begin(async (tx) => {
    await tx`set local jit = off`
    return read(tx)
  })) as T
}

/** Reads of at least this many stats are split in two (see rollupArrays). */
const SPLIT_FROM = 64

/** One stat's buckets as parallel arrays: slot index from the window's start, point count, sum (any order). */
export interface BucketArrays {
  stat_id: string
  h: ArrayLike<number>
  n: ArrayLike<number>
  sum: ArrayLike<number>
}

/**
 * The same buckets as the chart read (readBucketsMany at `size` seconds), from the coarsest rollup whose buckets
 * divide `size` (days, hours, five minutes on plain PostgreSQL (sql/0048), or minutes) plus the per-minute tail not
 * yet folded in on plain PostgreSQL, one row per stat with its buckets as arrays: thousands of stats x a week of
 * hours (or one stat x a month of minutes) come back as a few rows instead of hundreds of thousands, which is most
 * of what a read of that size costs the client. The rollup has one row per stat and bucket already, so only the
 * (small) tail is grouped; both are read in one statement (one snapshot: a refresh folding the tail meanwhile cannot
 * count it twice or not at all), and a bucket found in both is added up here (addTail). The buckets are aggregated
 * without `order by`: each carries its slot, and sorting every stat's rows again cost more than the scan itself.
 * `f` and `t` are multiples of `size`. When `size` is larger than the rollup's buckets (15 minutes from rollups_5m),
 * a slot comes back once for each of its rollup rows, for the caller to add up: grouping them in SQL cost more than
 * sending them (hashing a month of minutes of 100 series). With `zones` ([from, to) pairs of seconds, in order, not
 * overlapping), only the buckets inside them are read: a few stretches of a long span (PromQL's short windows at a
 * long step) without scanning the rest. Whole days of five-minute and hourly rows come as their day blobs where
 * those exist (sql/0050): the rows already packed, bit for bit, in bucket order.
 */
export async function rollupArrays(
  sql: Db,
  ids: string[],
  f: number,
  t: number,
  size: number,
  /** The stat each id is read as (a stat's several series as one, docs/decisions.md §24; an owner's ids next to each other): rows come back per owner. */
  owners?: readonly string[],
  zones?: ReadonlyArray<readonly [number, number]>,
): Promise<BucketArrays[]> {
  const from = new Date(f * 1000)
  const to = new Date(t * 1000)
  const timescale = await usesTimescale(sql)
  // Five minutes only on plain PostgreSQL (sql/0048): TimescaleDB's 5-minute buckets group rollups_1m.
  const table =
    size % 86_400 === 0
      ? sql`rollups_1d`
      : size % 3_600 === 0
        ? sql`rollups_1h`
        : size % 300 === 0 && !timescale
          ? sql`rollups_5m`
          : sql`rollups_1m`
  // The rollup's bucket when its whole days are packed (sql/0050, plain PostgreSQL): five minutes and hours.
  const packedSize = timescale || size % 86_400 === 0 ? 0 : size % 3_600 === 0 ? 3_600 : size % 300 === 0 ? 300 : 0
  // One stat by equality: with `= any(array)` the planner expects hundreds of groups and sorts a
  // month of minute rows by stat (spilling to disk at the default work_mem) before aggregating them.
  const match = (list: string[]) => (list.length === 1 ? sql`stat_id = ${list[0]}::uuid` : sql`stat_id = any(${list}::uuid[])`)
  // Rows of a table in [from, to), or in each zone: a lateral scan per zone (`offset 0` keeps the planner from
  // joining the zones to a scan of the whole span, which it does otherwise and which cost 100 times more). The
  // zones' bounds go as array text: postgres.js serializes a timestamp array element by element, through a Date.
  const rows = (
    from_: postgres.Fragment,
    list: string[],
    cols: postgres.Fragment,
    zoned: ReadonlyArray<readonly [number, number]> | null = zones ?? null,
  ) =>
    zoned
      ? sql`unnest(${`{${zoned.map(([a]) => a).join(',')}}`}::float8[], ${`{${zoned.map(([, b]) => b).join(',')}}`}::float8[]) as z(a, b)
        cross join lateral (select ${cols} from ${from_} where ${match(list)} and bucket >= to_timestamp(z.a) and bucket < to_timestamp(z.b) offset 0) r`
      : sql`(select ${cols} from ${from_} where ${match(list)} and bucket >= ${from} and bucket < ${to}) r`
  // Whole UTC days of five-minute or hourly rows, one stat at a time, come packed (sql/0050, rollup_days) where their
  // day blob exists: [d0, d1) is the span's whole days. Not with owners (their series are added up by bucket in SQL).
  // With zones too, a whole day's blob rather than the zones' scans of its rows, which cost more than the month of
  // blobs (bench:promql, `sum(rate(l[5m]))` at an hour's step); the decoder leaves out the buckets outside the zones.
  const d0 = Math.ceil(f / 86_400) * 86_400
  const d1 = Math.floor(t / 86_400) * 86_400
  const days = packedSize && !owners && d0 < d1 ? [new Date(d0 * 1000), new Date(d1 * 1000)] : null
  /** The zones' parts inside [a, b), seconds. */
  const clip = (a: number, b: number) =>
    (zones ?? []).filter(([za, zb]) => za < b && zb > a).map(([za, zb]): [number, number] => [Math.max(za, a), Math.min(zb, b)])
  // The rollup rows that no blob stands for: the partial days at the span's ends, and the whole days without a blob
  // (today's, a day a late write touched until the builder packs it again), each an index scan of its stat and day.
  // The blobs are read by the same statement, under the same snapshot: a day is either its blob or its rows. The
  // days are counted by an integer series, whose size the planner knows: over a series of timestamps it expected a
  // thousand days of every stat, and the statement's estimate passed jit_above_cost (compiling it took 206 ms of a
  // 230 ms read). The days with a blob are looked for in rollup_days itself, whose statistics the planner has: over
  // the statement's own list of them (`there`) it expected a thousand days without one, and JIT compiling a month of
  // zones took 35 of 38 ms.
  const cols = sql`stat_id, bucket, count, sum`
  const unpacked = (list: string[], [a, b]: Date[]) => sql`(${
    zones
      ? sql`select ${cols} from ${rows(table, list, cols, [...clip(f, d0), ...clip(d1, t)])}`
      : sql`select ${cols} from ${table} where ${match(list)} and bucket >= ${from} and bucket < ${a}
    union all
    select ${cols} from ${table} where ${match(list)} and bucket >= ${b} and bucket < ${to}`
  }
    union all
    select r.stat_id, r.bucket, r.count, r.sum
    from unnest(${list}::uuid[]) as i(id) cross join generate_series(0, ${(b.getTime() - a.getTime()) / 86_400_000 - 1}::int) as g(k)
    cross join lateral (select ${a}::timestamptz + g.k * interval '24 hours' as day) d
    cross join lateral (select stat_id, bucket, count, sum from ${table}
      where stat_id = i.id and bucket >= d.day and bucket < d.day + interval '24 hours' offset 0) r
    where not exists (select 1 from rollup_days p where p.stat_id = i.id and p.size = ${packedSize} and p.day = d.day)) r`
  // The tail's rows carry their count negated, to be told from the rollup's. A rollup of larger buckets than its
  // own is not grouped to them here either: its rows come back as they are, several of a slot. The tail (the last
  // seconds' minutes, not folded yet) is read over the whole span in one scan and its rows outside the zones left
  // out below: a scan per zone of it cost a fifth of a month of hourly zones' read, descending its index for
  // every zone and stat to find nothing.
  const buckets = (list: string[]) => sql`
    select stat_id, bucket, count as n, sum as s from ${days ? unpacked(list, days) : rows(table, list, sql`stat_id, bucket, count, sum`)}${
      timescale
        ? sql``
        : sql`
    union all
    select stat_id, bucket, (-sum(count))::int8, sum(sum) from ${rows(sql`rollup_pending`, list, sql`stat_id, bucket, count, sum`, null)} group by 1, 2`
    }`
  /** The first zone ending after `seconds` (zones are in order, not overlapping). */
  const zoneAfter = (seconds: number) => {
    let lo = 0
    let hi = zones!.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (zones![mid][1] <= seconds) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  /** Whether a bucket starting at `seconds` (of the tail, or of a day without a blob) is inside a zone. */
  const inZones = (seconds: number) => {
    const z = zoneAfter(seconds)
    return z < zones!.length && zones![z][0] <= seconds
  }
  // Each bucket as 24 bytes (its time, count and sum in the binary send format: timestamptz, int8, float8): one
  // bytea per stat, decoded natively, instead of three text arrays parsed number by number (a million small
  // strings for 500 stats x 720 hours). The values are the stored float8s, bit for bit; the slot is worked out
  // here, which cost PostgreSQL a fifth of a week of minutes' read (date_part and arithmetic on every row). The
  // bytea comes as base64 text: two thirds of hex's size, and decoding it cost a quarter of what hex did (10 MB,
  // a week of minutes of 100 series: 10 against 40 ms).
  // With owners, each owner's series are added up here by bucket (the tail's kept apart, as for one stat).
  const ownerOf = owners ? new Map(ids.map((id, i) => [id, owners[i]])) : undefined
  const source = (list: string[]) =>
    ownerOf
      ? sql`select o.owner as stat_id, bucket, sum(n)::int8 as n, sum(s) as s from (${buckets(list)}) x
          join unnest(${list}::uuid[], ${list.map((id) => ownerOf.get(id)!)}::uuid[]) as o(id, owner) on o.id = x.stat_id group by 1, 2, n < 0`
      : buckets(list)
  // The day blobs of [d0, d1), a row each, whole (with zones, the decoder leaves out the buckets outside them),
  // except those whose version the process holds decoded (day-cache.ts): of the held versions, only those no longer
  // there come back (a row with no stat), so a held day not named is still the day's in this statement's snapshot.
  // A month of 50 held series is then no rows rather than 1,550. Each stat's days by an index-only scan of its own
  // (there), a blob's bytes fetched only for the days sent, and the held versions as a hashed subplan: joined to
  // them, the planner scanned the whole table and hashed the rows it kept, blobs and all (9 ms for a month of 50
  // stats).
  const blobs = (known: string) => sql`
    select d.stat_id, extract(epoch from d.day)::float8 as day, d.version::text as version,
      (select encode(buckets, 'base64') from rollup_days r where r.stat_id = d.stat_id and r.size = ${packedSize} and r.day = d.day) as b
    from there d where d.version not in (select unnest(${known}::int8[]))
    union all
    select null, null, v::text, null from (select unnest(${known}::int8[]) as v except select version from there) gone`
  /** The days' versions, from the primary key's index alone (sql/0051), each stat's by a scan of its own. */
  const there = (list: string[], [a, b]: Date[]) => sql`there as materialized (
    select x.stat_id, x.day, x.version from unnest(${list}::uuid[]) as i(id)
    cross join lateral (select stat_id, day, version from rollup_days
      where stat_id = i.id and size = ${packedSize} and day >= ${a} and day < ${b} offset 0) x)`
  const rest = (list: string[]) => sql`
    select stat_id, null::float8 as day, null::text as version, encode(string_agg(b, ''::bytea), 'base64') as b from (
      select stat_id, timestamptz_send(bucket) || int8send(n) || float8send(s) as b from (${source(list)}) x
    ) x group by stat_id`
  type Row = { stat_id: string | null; day: number | null; version: string | null; b: string | null }
  const query = (db: Db, list: string[], known: string) =>
    days ? db<Row[]>`with ${there(list, days)} ${rest(list)} union all ${blobs(known)}` : db<Row[]>`${rest(list)}`
  /** Buckets of a stat as columns: a whole day's (from its blob, held or sent), or the rest (the tail's counts negated). */
  type Part = Pick<DayBuckets, 't' | 'n' | 'sum'>
  // A scan per zone: the planner's estimate of each (a range of parameters, 0.5 % of the table) adds up past
  // jit_above_cost, and compiling took longer than the read (90 of 130 ms for a week of hourly zones). With whole
  // days read from blobs, only the partial days' zones are scanned, and the transaction's three more round trips
  // cost more than they saved.
  const read = async (list: string[]) => {
    // The held days of these stats in [d0, d1), kept here by stat and day: another read may push them out of the
    // cache meanwhile. Their versions go as one array's text (postgres.js would write a month of 100 series' 3,100
    // element by element).
    const held = new Map<string, Array<DayBuckets | undefined>>()
    const versions: string[] = []
    if (days)
      for (const id of list) {
        const ofStat: Array<DayBuckets | undefined> = []
        for (let d = d0; d < d1; d += 86_400) {
          const hit = dayCache.get(id, packedSize, d)
          ofStat.push(hit)
          if (hit) versions.push(hit.version)
        }
        held.set(id, ofStat)
      }
    const known = `{${versions.join(',')}}`
    const rows = zones && !days ? await withoutJit(sql, (tx) => query(tx, list, known)) : await query(sql, list, known)
    const parts = new Map<string, { days: Array<[number, Part]>; rest?: Part }>()
    const partsOf = (id: string) => {
      let p = parts.get(id)
      if (!p) parts.set(id, (p = { days: [] }))
      return p
    }
    const gone = new Set<string>()
    for (const row of rows) {
      if (row.stat_id === null) gone.add(row.version!)
      else if (row.day === null) partsOf(row.stat_id).rest = unpackBuckets(row.b!)
      else {
        const day = { version: row.version!, ...unpackBuckets(row.b!) }
        dayCache.put(row.stat_id, packedSize, row.day, day)
        partsOf(row.stat_id).days.push([row.day, day])
      }
    }
    for (const [id, ofStat] of held)
      for (let k = 0; k < ofStat.length; k++) {
        const day = ofStat[k]
        if (day && !gone.has(day.version)) partsOf(id).days.push([d0 + k * 86_400, day])
      }
    return [...parts].map(([stat_id, p]) => {
      const list = p.days.sort((x, y) => x[0] - y[0]).map(([, d]) => d)
      if (p.rest) list.push(p.rest)
      // The stretches [i0, i1) of each part's buckets to keep: all of them, or those inside the zones. A day's
      // buckets are in time order, so its zones' stretches are walked, not each bucket sought among a month of
      // zones (a month of five-minute days is 864,000 buckets for 100 series, of which the zones keep 6,000).
      const stretches: number[] = []
      let m = 0
      let j = 0
      const keep = (i0: number, i1: number) => {
        stretches.push(j, i0, i1)
        m += i1 - i0
      }
      for (; j < list.length; j++) {
        const dt = list[j].t
        if (!zones) keep(0, dt.length)
        else if (list[j] === p.rest) {
          for (let i = 0; i < dt.length; i++) if (inZones(dt[i])) keep(i, i + 1)
        } else if (dt.length === 86_400 / packedSize) {
          // A whole day's every bucket: bucket i starts at dt[0] + i * packedSize.
          const day = dt[0]
          for (let z = zoneAfter(day); z < zones.length && zones[z][0] < day + 86_400; z++) {
            const i0 = Math.max(0, Math.ceil((zones[z][0] - day) / packedSize))
            const i1 = Math.min(dt.length, Math.ceil((zones[z][1] - day) / packedSize))
            if (i1 > i0) keep(i0, i1)
          }
        } else
          for (let z = zoneAfter(dt[0]), i = 0; z < zones.length && i < dt.length; z++) {
            const [za, zb] = zones[z]
            while (i < dt.length && dt[i] < za) i++
            const i0 = i
            while (i < dt.length && dt[i] < zb) i++
            if (i > i0) keep(i0, i)
          }
      }
      // Typed arrays: a month of minutes of 100 series is 4 million numbers, and boxed array slots were most of
      // the decoding's time and garbage.
      const r = { stat_id, h: new Int32Array(m), n: new Float64Array(m), sum: new Float64Array(m) }
      let k = 0
      for (let x = 0; x < stretches.length; x += 3) k = slotted(list[stretches[x]], stretches[x + 1], stretches[x + 2], f, size, r, k)
      let tail = false
      if (p.rest) for (let i = 0; i < m && !tail; i++) tail = r.h[i] < 0
      return tail ? addTail(r) : r
    })
  }
  // Many stats are read in two halves at once, on two connections of the pool: one query runs in
  // one backend, scanning and aggregating row by row, and the halves overlap each other and the
  // parsing of the answer (measured with 500 stats x 720 hours: 1.5x faster than one query). In a
  // transaction the two share its connection and simply run in turn.
  if (ids.length < SPLIT_FROM) return read(ids)
  // An owner's series stay in one half (its buckets are added up in one statement).
  let mid = Math.ceil(ids.length / 2)
  while (ownerOf && mid < ids.length && ownerOf.get(ids[mid]) === ownerOf.get(ids[mid - 1])) mid++
  if (mid >= ids.length) return read(ids)
  const [a, b] = await Promise.all([read(ids.slice(0, mid)), read(ids.slice(mid))])
  return [...a, ...b]
}
