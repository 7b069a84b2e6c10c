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

/** Buckets as columns: start in seconds since the epoch, point count (the tail's negated), sum. */
export interface Part {
  t: Float64Array
  n: Float64Array
  sum: Float64Array
}

/**
 * Buckets packed 24 bytes each (rollupParts, sql/0050: timestamptz_send, int8send, float8send), sent as base64, as
 * columns.
 */
function unpackBuckets(text: string): Part {
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

/** A day blob's buckets by slot (DayBuckets' layout): day is its midnight, size its buckets' (seconds). */
function unpackDay(text: string, day: number, size: number): Omit<DayBuckets, 'version'> {
  const { t, n, sum } = unpackBuckets(text)
  const slots = new Float64Array((2 * 86_400) / size)
  for (let k = 0; k < t.length; k++) {
    const i = Math.round((t[k] - day) / size)
    slots[2 * i] = n[k]
    slots[2 * i + 1] = sum[k]
  }
  return { slots }
}

/** The first of the zones (in order, not overlapping) ending after `seconds`. */
function zoneAfter(zones: ReadonlyArray<readonly [number, number]>, seconds: number): number {
  let lo = 0
  let hi = zones.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (zones[mid][1] <= seconds) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Whether a bucket starting at `seconds` (of the tail, or of a day without a blob) is inside a zone. */
function inZones(zones: ReadonlyArray<readonly [number, number]>, seconds: number): boolean {
  const z = zoneAfter(zones, seconds)
  return z < zones.length && zones[z][0] <= seconds
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

/** Reads whose whole days were all held and checked at once, and of those, the ones read again (tests read it). */
export const heldReads = { checked: 0, readAgain: 0 }

/**
 * Reads of at least this many stats are split in two (see rollupParts), when about this many rows are ahead, a blob
 * not held counted as BLOB_ROWS (sending and decoding a month of 100 series' hourly blobs in one statement took a
 * fifth longer than in two).
 */
const SPLIT_FROM = 64
const SPLIT_ROWS = 20_000
const BLOB_ROWS = 64

/** One stat's buckets as parallel arrays: slot index from the window's start, point count, sum (any order). */
export interface BucketArrays {
  stat_id: string
  h: ArrayLike<number>
  n: ArrayLike<number>
  sum: ArrayLike<number>
}

/** A stat's buckets as rollupParts reads them. */
export interface StatParts {
  /** Day k of the span's whole days, from its blob (held or sent); undefined where the day's buckets are in `rest`. */
  days: Array<DayBuckets | undefined>
  /** The buckets no blob stands for, in no particular order. */
  rest?: Part
  /** The stat's row of the caller's `alongside` statement, as text (see rollupParts). */
  alongside?: string
}

/**
 * Rows a caller of rollupParts reads in the same statement as the buckets (one round trip and one snapshot): at most
 * one a stat of the list given, as (stat_id, null::float8, 'alongside', b::text). PromQL's counters' totals before
 * the span: a statement of their own was a tenth of a week's rate of one series, most of it waking a backend.
 */
export type Alongside = (list: string[]) => postgres.Fragment | null

export interface RolledUp {
  /** Midnight (seconds) of the span's first whole day: `days[k]` is the day d0 + k x 86,400. */
  d0: number
  /** The blobs' bucket size in seconds (0: none were read, every bucket is in `rest`). */
  packedSize: number
  stats: Map<string, StatParts>
}

/**
 * The same buckets as the chart read (readBucketsMany at `size` seconds), from the coarsest rollup whose buckets
 * divide `size` (days, hours, five minutes on plain PostgreSQL (sql/0048), or minutes) plus the per-minute tail not
 * yet folded in on plain PostgreSQL, one row per stat with its buckets packed: thousands of stats x a week of
 * hours (or one stat x a month of minutes) come back as a few rows instead of hundreds of thousands, which is most
 * of what a read of that size costs the client. The rollup has one row per stat and bucket already, so only the
 * (small) tail is grouped; both are read in one statement (one snapshot: a refresh folding the tail meanwhile cannot
 * count it twice or not at all), and a bucket found in both is for the caller to add up (the tail's count comes
 * negated). The buckets are aggregated without `order by`: each carries its time, and sorting every stat's rows
 * again cost more than the scan itself. `f` and `t` are multiples of `size`. When `size` is larger than the rollup's
 * buckets (15 minutes from rollups_5m), a slot comes back once for each of its rollup rows, for the caller to add up:
 * grouping them in SQL cost more than sending them (hashing a month of minutes of 100 series). With `zones` ([from,
 * to) pairs of seconds, in order, not overlapping), only the buckets inside them are read: a few stretches of a long
 * span (PromQL's short windows at a long step) without scanning the rest. Whole days of five-minute and hourly rows
 * come as their day blobs where those exist (sql/0050), laid out by slot (DayBuckets), whole even with zones: the
 * caller takes the slots it needs.
 */
export async function rollupParts(
  sql: Db,
  ids: string[],
  f: number,
  t: number,
  size: number,
  /** The stat each id is read as (a stat's several series as one, docs/decisions.md §24; an owner's ids next to each other): rows come back per owner. */
  owners?: readonly string[],
  zones?: ReadonlyArray<readonly [number, number]>,
  alongside?: Alongside,
): Promise<RolledUp> {
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
  // A partial day's rows, an index scan per stat: over `= any(array)`, the plan PostgreSQL keeps for the statement
  // after five runs (generic, the array's length unknown) gathered two parallel workers, whose start took 4 to 7 ms
  // of a read that takes 1.5.
  const partial = (list: string[], a: Date, b: Date) => sql`
    select r.stat_id, r.bucket, r.count, r.sum from unnest(${list}::uuid[]) as i(id)
    cross join lateral (select ${cols} from ${table} where stat_id = i.id and bucket >= ${a} and bucket < ${b} offset 0) r`
  // The partial days before a and after b; a span that starts or ends on a midnight has none there (an index scan
  // per stat that found nothing was a tenth of a held week's statement).
  const edgeDays = (list: string[], a: Date, b: Date) => {
    const edges = [...(from < a ? [partial(list, from, a)] : []), ...(b < to ? [partial(list, b, to)] : [])]
    return edges.length === 2 ? sql`${edges[0]} union all ${edges[1]}` : (edges[0] ?? sql`select ${cols} from ${table} where false`)
  }
  const unpacked = (list: string[], [a, b]: Date[], allHeld: boolean) =>
    sql`(${zones ? sql`select ${cols} from ${rows(table, list, cols, [...clip(f, d0), ...clip(d1, t)])}` : edgeDays(list, a, b)}${
      allHeld
        ? sql``
        : sql`
    union all
    select r.stat_id, r.bucket, r.count, r.sum
    from unnest(${list}::uuid[]) as i(id) cross join generate_series(0, ${(b.getTime() - a.getTime()) / 86_400_000 - 1}::int) as g(k)
    cross join lateral (select ${a}::timestamptz + g.k * interval '24 hours' as day) d
    cross join lateral (select stat_id, bucket, count, sum from ${table}
      where stat_id = i.id and bucket >= d.day and bucket < d.day + interval '24 hours' offset 0) r
    where not exists (select 1 from rollup_days p where p.stat_id = i.id and p.size = ${packedSize} and p.day = d.day)`
    }) r`
  // The tail's rows carry their count negated, to be told from the rollup's. A rollup of larger buckets than its
  // own is not grouped to them here either: its rows come back as they are, several of a slot. The tail (the last
  // seconds' minutes, not folded yet) is read over the whole span in one scan and its rows outside the zones left
  // out below: a scan per zone of it cost a fifth of a month of hourly zones' read, descending its index for
  // every zone and stat to find nothing.
  const buckets = (list: string[], allHeld: boolean) => sql`
    select stat_id, bucket, count as n, sum as s from ${days ? unpacked(list, days, allHeld) : rows(table, list, sql`stat_id, bucket, count, sum`)}${
      timescale
        ? sql``
        : sql`
    union all
    select stat_id, bucket, (-sum(count))::int8, sum(sum) from ${rows(sql`rollup_pending`, list, sql`stat_id, bucket, count, sum`, null)} group by 1, 2`
    }`
  // Each bucket as 24 bytes (its time, count and sum in the binary send format: timestamptz, int8, float8): one
  // bytea per stat, decoded natively, instead of three text arrays parsed number by number (a million small
  // strings for 500 stats x 720 hours). The values are the stored float8s, bit for bit; the slot is worked out
  // here, which cost PostgreSQL a fifth of a week of minutes' read (date_part and arithmetic on every row). The
  // bytea comes as base64 text: two thirds of hex's size, and decoding it cost a quarter of what hex did (10 MB,
  // a week of minutes of 100 series: 10 against 40 ms).
  // With owners, each owner's series are added up here by bucket (the tail's kept apart, as for one stat).
  const ownerOf = owners ? new Map(ids.map((id, i) => [id, owners[i]])) : undefined
  const source = (list: string[], allHeld: boolean) =>
    ownerOf
      ? sql`select o.owner as stat_id, bucket, sum(n)::int8 as n, sum(s) as s from (${buckets(list, allHeld)}) x
          join unnest(${list}::uuid[], ${list.map((id) => ownerOf.get(id)!)}::uuid[]) as o(id, owner) on o.id = x.stat_id group by 1, 2, n < 0`
      : buckets(list, allHeld)
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
  const rest = (list: string[], allHeld = false) => sql`
    select stat_id, null::float8 as day, null::text as version, encode(string_agg(b, ''::bytea), 'base64') as b from (
      select stat_id, timestamptz_send(bucket) || int8send(n) || float8send(s) as b from (${source(list, allHeld)}) x
    ) x group by stat_id`
  // When every whole day of the read is held, the statement checks them all at once instead of one by one: the
  // blobs of the stats' days in [d0, d1), counted and their versions added up. A day's blob is only ever deleted,
  // or replaced by one of a higher version (an identity), and a day holds one blob at most; so a count and a sum
  // equal to the held days' say that every held day is still its day's blob in this statement's snapshot. Sent as
  // a row with no stat and no day. Checking each held version (`there`, `blobs`) and looking for the days without a
  // blob was most of such a read's statement (bench:promql: a month of 100 series at an hour's step, a quarter of its
  // time); a count or sum that differs (a late write touched a held day) reads again with the full statement.
  const checked = (list: string[], [a, b]: Date[]) => sql`
    select null, null, count(*) || ':' || coalesce(sum(x.version), 0), null from unnest(${list}::uuid[]) as i(id)
    cross join lateral (select version from rollup_days
      where stat_id = i.id and size = ${packedSize} and day >= ${a} and day < ${b} offset 0) x`
  type Row = { stat_id: string | null; day: number | null; version: string | null; b: string | null }
  const along = (list: string[]) => {
    const rows = alongside?.(list)
    return rows ? sql` union all ${rows}` : sql``
  }
  const query = (db: Db, list: string[], known: string) =>
    days
      ? db<Row[]>`with ${there(list, days)} ${rest(list)} union all ${blobs(known)}${along(list)}`
      : db<Row[]>`${rest(list)}${along(list)}`
  // A scan per zone: the planner's estimate of each (a range of parameters, 0.5 % of the table) adds up past
  // jit_above_cost, and compiling took longer than the read (90 of 130 ms for a week of hourly zones). With whole
  // days read from blobs, only the partial days' zones are scanned, and the transaction's three more round trips
  // cost more than they saved.
  // The held days of the stats in [d0, d1), kept here by stat and day: another read may push them out of the cache
  // meanwhile.
  const held = new Map<string, Array<DayBuckets | undefined>>()
  let heldCount = 0
  if (days)
    for (const id of ids) {
      const ofStat: Array<DayBuckets | undefined> = []
      for (let d = d0; d < d1; d += 86_400) {
        const hit = dayCache.get(id, packedSize, d)
        ofStat.push(hit)
        if (hit) heldCount++
      }
      held.set(id, ofStat)
    }
  const dayCount = days ? (d1 - d0) / 86_400 : 0
  const read = async (list: string[]) => {
    // The held versions go as one array's text (postgres.js would write a month of 100 series' 3,100 element by
    // element).
    const versions: string[] = []
    // Added up as numbers: exact while the total stays below 2^53 (every partial sum is then below it too), as
    // identity values do; BigInts only past it. A BigInt made of each version was 2 to 3 % of a held week's query.
    let sum = 0
    for (const id of list)
      for (const hit of held.get(id) ?? [])
        if (hit) {
          versions.push(hit.version)
          sum += Number(hit.version)
        }
    let rows: Row[] | undefined
    if (days && versions.length === list.length * dayCount) {
      const all = await sql<Row[]>`${rest(list, true)} union all ${checked(list, days)}${along(list)}`
      const check = all.find((r) => r.stat_id === null)
      heldReads.checked++
      const total = Number.isSafeInteger(sum) ? String(sum) : String(versions.reduce((a, v) => a + BigInt(v), 0n))
      if (check?.version === `${versions.length}:${total}`) rows = all.filter((r) => r !== check)
      else heldReads.readAgain++
    }
    if (!rows) {
      const known = `{${versions.join(',')}}`
      rows = zones && !days ? await withoutJit(sql, (tx) => query(tx, list, known)) : await query(sql, list, known)
    }
    const parts = new Map<string, StatParts>()
    const partsOf = (id: string) => {
      let p = parts.get(id)
      if (!p) parts.set(id, (p = { days: [] }))
      return p
    }
    const gone = new Set<string>()
    for (const row of rows) {
      if (row.stat_id === null) gone.add(row.version!)
      else if (row.version === 'alongside') partsOf(row.stat_id).alongside = row.b!
      else if (row.day === null) partsOf(row.stat_id).rest = unpackBuckets(row.b!)
      else {
        const day = { version: row.version!, ...unpackDay(row.b!, row.day, packedSize) }
        dayCache.put(row.stat_id, packedSize, row.day, day)
        partsOf(row.stat_id).days[(row.day - d0) / 86_400] = day
      }
    }
    for (const id of list)
      for (let k = 0, ofStat = held.get(id) ?? []; k < ofStat.length; k++) {
        const day = ofStat[k]
        if (day && !gone.has(day.version)) partsOf(id).days[k] = day
      }
    return parts
  }
  // Many stats are read in two halves at once, on two connections of the pool: one query runs in
  // one backend, scanning and aggregating row by row, and the halves overlap each other and the
  // parsing of the answer (measured with 500 stats x 720 hours: 1.5x faster than one query). In a
  // transaction the two share its connection and simply run in turn. Not when little is left to scan (the days
  // held, the partial days short): planning the statement was then half of each half's cost, and a held week of
  // 100 series took longer in two statements than in one (bench:promql).
  const done = (stats: Map<string, StatParts>): RolledUp => ({ d0, packedSize: days ? packedSize : 0, stats })
  const bucket = size % 86_400 === 0 ? 86_400 : size % 3_600 === 0 ? 3_600 : packedSize || 60
  const rowsAhead = days
    ? (ids.length * (d0 - f + (t - d1))) / bucket + ((ids.length * (d1 - d0)) / 86_400 - heldCount) * BLOB_ROWS
    : (ids.length * (t - f)) / bucket
  if (ids.length < SPLIT_FROM || rowsAhead < SPLIT_ROWS) return done(await read(ids))
  // An owner's series stay in one half (its buckets are added up in one statement).
  let mid = Math.ceil(ids.length / 2)
  while (ownerOf && mid < ids.length && ownerOf.get(ids[mid]) === ownerOf.get(ids[mid - 1])) mid++
  if (mid >= ids.length) return done(await read(ids))
  const [a, b] = await Promise.all([read(ids.slice(0, mid)), read(ids.slice(mid))])
  return done(new Map([...a, ...b]))
}

/**
 * rollupParts' buckets as a row of arrays a stat, each bucket with its slot of `size` seconds from f (the tail's as
 * -1 - slot until addTail adds it in), in time order: whole days' buckets first, then the rest's.
 */
export async function rollupArrays(...args: Parameters<typeof rollupParts>): Promise<BucketArrays[]> {
  const [, , f, , size, , zones] = args
  const { d0, packedSize: ps, stats } = await rollupParts(...args)
  const out: BucketArrays[] = []
  for (const [stat_id, p] of stats) {
    // Typed arrays, as long as every bucket could be and cut to those kept: a month of minutes of 100 series is 4
    // million numbers, and boxed array slots were most of the decoding's time and garbage.
    const most = (ps ? p.days.length * (86_400 / ps) : 0) + (p.rest?.t.length ?? 0)
    const h = new Int32Array(most)
    const n = new Float64Array(most)
    const sum = new Float64Array(most)
    let m = 0
    const keep = (x: number, count: number, s: number) => {
      const slot = Math.floor((x - f) / size)
      h[m] = count < 0 ? -1 - slot : slot
      n[m] = count < 0 ? -count : count
      sum[m++] = s
    }
    for (let k = 0; k < p.days.length; k++) {
      const day = p.days[k]
      if (!day) continue
      const start = d0 + k * 86_400
      // A day's zones' stretches walked by index, not each bucket sought among a month of zones.
      for (let z = zones ? zoneAfter(zones, start) : 0; zones ? z < zones.length && zones[z][0] < start + 86_400 : z < 1; z++) {
        const i0 = zones ? Math.max(0, Math.ceil((zones[z][0] - start) / ps)) : 0
        const i1 = zones ? Math.min(day.slots.length / 2, Math.ceil((zones[z][1] - start) / ps)) : day.slots.length / 2
        for (let i = i0; i < i1; i++) if (day.slots[2 * i] !== 0) keep(start + i * ps, day.slots[2 * i], day.slots[2 * i + 1])
      }
    }
    let tail = false
    if (p.rest)
      for (let i = 0; i < p.rest.t.length; i++) {
        if (zones && !inZones(zones, p.rest.t[i])) continue
        keep(p.rest.t[i], p.rest.n[i], p.rest.sum[i])
        tail ||= p.rest.n[i] < 0
      }
    const r = { stat_id, h: h.subarray(0, m), n: n.subarray(0, m), sum: sum.subarray(0, m) }
    out.push(tail ? addTail(r) : r)
  }
  return out
}
