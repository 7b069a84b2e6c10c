// Quantile sketches of gauges (docs/decisions.md §20), kept beside the rollups: one per gauge stat and
// hour (sketches_1h), per 6 hours (sketches_6h) and per day (sketches_1d), sql/0023_gauge_sketches.sql.
//
// The sketch is DDSketch (Masson et al., VLDB 2019) with relative accuracy 1 %, in the index space of
// @datadog/sketches-js's LogarithmicMapping: a value v > 0 goes to bin ceil(ln v / ln γ), γ = 1.01/0.99;
// negatives to a second set of bins of |v|; zeros (|v| below the mapping's smallest value) to a count.
// Merging is adding bin counts, so an hour merged from points equals the same hour merged from minutes,
// and a day merged from hours equals one sketch over all its points. What is our own, and why:
//   * The encoding. The library's toProto writes every bin of its dense store as an 8-byte double, padded
//     to 128-bin chunks: 2-7 KB whatever the sketch holds, and its round trip drops min, max and sum
//     (measured with the library before choosing; docs/percentiles.md). Ours is a version byte, then varints, each store dense
//     or sparse, whichever is smaller: a few hundred bytes an hour (figures in docs/percentiles.md).
//     min/max/sum stay in the rollups' columns.
//   * The quantile. The library answers rank q·(n−1); the service promises nearest-rank (docs/decisions.md §D-T:
//     "within 1 % of exact nearest-rank values"), rank ceil(q·n), so the bin is looked up here.
//   * Building. Hours are rebuilt from the points table (bins counted in SQL, a few hundred rows per hour
//     rather than every value), once an hour is complete: rollup_pending keeps only count/sum/min/max, and
//     re-reading the points of each touched hour once is cheaper than writing a per-minute sketch on the
//     write path (which docs/decisions.md §D-2 keeps to one append per batch). A rebuild is idempotent: late points,
//     imports and backfills mark their hour again and it is rebuilt whole.
// Which tiers: minute sketches would cost more bytes than the minute's raw values (a gauge sampled every
// 10-15 s has 4-6 values a minute, 48 B raw, while a sketch is 100+ B), so ranges whose buckets are under an
// hour (1h, 6h, 24h) read raw points, exactly, except in dense hours: an hour of MINUTE_SKETCH_MIN_POINTS or
// more gets minute sketches too (sql/0034; a gauge of 4M points a day read raw took 2.4 s for a 24h chart).
// Hours serve 7d (168 sketches), 6-hour sketches 30d (120), days 90d and 180d (180), so no chart merges more than
// 180 sketches besides the few hours not yet sketched (24h of a dense gauge merges 1,440 minute sketches).
import { DDSketch } from '@datadog/sketches-js'
import type { Db, Sql } from '../db.js'

export const RELATIVE_ACCURACY = 0.01
const mapping = new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY }).mapping
/** ln γ: SQL computes a value's bin as ceil(ln |v| / ln γ), the mapping's key() in natural logarithms. */
export const LN_GAMMA = Math.log((1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY))
/** Below this magnitude a value counts as zero (the mapping's smallest representable value). */
const MIN_MAGNITUDE = 2 ** -1023 * ((1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY))

const VERSION = 1

/**
 * Points an hour from which it gets minute sketches (one a second on average): below it, the hour's raw points
 * are fewer bytes than its minute sketches and read exactly in a few milliseconds.
 */
export const MINUTE_SKETCH_MIN_POINTS = 3_600

/**
 * The tiers merged from hour sketches, by chart bucket they serve: 6 hours for 30d (120 sketches rather than
 * 720: at 720 the merge alone took 5-60 ms on this 2-core machine under load, past the 50 ms p99 target),
 * days for 90d and 180d.
 */
export const COARSE_TIERS = [
  { table: 'sketches_6h', seconds: 21_600 },
  { table: 'sketches_1d', seconds: 86_400 },
] as const

/** Counts by bin key, dense (a merge of hundreds of sketches is array additions, not map look-ups). */
class Bins {
  lo = 0
  counts = new Float64Array(0)
  /** Keys holding a count, for encoding. */
  nonEmpty = 0

  add(key: number, n: number): void {
    if (!this.counts.length) {
      this.lo = key - 32
      this.counts = new Float64Array(128)
    } else if (key < this.lo || key >= this.lo + this.counts.length) {
      const lo = Math.min(this.lo, key - 32)
      const hi = Math.max(this.lo + this.counts.length, key + 33)
      const grown = new Float64Array(Math.max(hi - lo, this.counts.length * 2))
      grown.set(this.counts, this.lo - lo)
      this.lo = lo
      this.counts = grown
    }
    const i = key - this.lo
    if (this.counts[i] === 0 && n) this.nonEmpty++
    this.counts[i] += n
  }

  /** [key, count] of every non-empty bin, keys ascending. */
  entries(): Array<[number, number]> {
    const out: Array<[number, number]> = []
    for (let i = 0; i < this.counts.length; i++) if (this.counts[i]) out.push([this.lo + i, this.counts[i]])
    return out
  }
}

/** Bin counts of one sketch: positive and negative bins by key, and the zeros. */
export class Sketch {
  pos = new Bins()
  neg = new Bins()
  zero = 0
  count = 0

  add(sign: number, key: number, n: number): void {
    if (sign > 0) this.pos.add(key, n)
    else if (sign < 0) this.neg.add(key, n)
    else this.zero += n
    this.count += n
  }

  accept(value: number): void {
    if (value > MIN_MAGNITUDE) this.add(1, mapping.key(value), 1)
    else if (value < -MIN_MAGNITUDE) this.add(-1, mapping.key(-value), 1)
    else this.add(0, 0, 1)
  }

  merge(other: Sketch): void {
    for (const [k, n] of other.pos.entries()) this.pos.add(k, n)
    for (const [k, n] of other.neg.entries()) this.neg.add(k, n)
    this.zero += other.zero
    this.count += other.count
  }

  /**
   * The nearest-rank q-quantile (q in 0..1): the value of rank max(1, ceil(q·n)) in ascending order, within
   * 1 % of the exact one. Undefined when empty.
   */
  quantile(q: number): number | undefined {
    if (!this.count) return undefined
    const rank = Math.max(1, Math.ceil(q * this.count - 1e-9))
    let seen = 0
    // Ascending: the most negative first (largest key of |v|), then zeros, then positives by key.
    const neg = this.neg.counts
    for (let i = neg.length - 1; i >= 0; i--) if (neg[i] && (seen += neg[i]) >= rank) return -mapping.value(this.neg.lo + i)
    if ((seen += this.zero) >= rank) return 0
    const pos = this.pos.counts
    let last = 0
    for (let i = 0; i < pos.length; i++) {
      if (!pos[i]) continue
      last = i
      if ((seen += pos[i]) >= rank) return mapping.value(this.pos.lo + i)
    }
    return mapping.value(this.pos.lo + last)
  }

  encode(): Buffer {
    const out: number[] = [VERSION]
    varint(out, this.zero)
    encodeStore(out, this.pos)
    encodeStore(out, this.neg)
    return Buffer.from(out)
  }

  static decode(buf: Uint8Array): Sketch {
    return new Sketch().mergeEncoded(buf)
  }

  /** Adds an encoded sketch's bins to this one, without building it first (the read path's merge). */
  mergeEncoded(buf: Uint8Array): this {
    if (buf[0] !== VERSION) throw new Error(`unknown sketch encoding version ${buf[0]}`)
    const r = { buf, at: 1 }
    const zero = readVarint(r)
    this.zero += zero
    this.count += zero
    this.count += decodeStore(r, this.pos)
    this.count += decodeStore(r, this.neg)
    return this
  }

  /** The same bins as a @datadog/sketches-js DDSketch (interop, and its own quantile as a cross-check). */
  toDDSketch(): DDSketch {
    const d = new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY })
    for (const [k, n] of this.pos.entries()) d.accept(mapping.value(k), n)
    for (const [k, n] of this.neg.entries()) d.accept(-mapping.value(k), n)
    if (this.zero) d.accept(0, this.zero)
    return d
  }
}

// Store layout: varint bin count m (0: empty). Then a mode byte: 0 dense (zigzag first key, then the
// counts of every key up to the last, zeros included), 1 sparse (zigzag first key, then (gap, count)
// pairs). Dense is one byte a bin for small counts and wins on many points; sparse wins on few.
function encodeStore(out: number[], bins: Bins): void {
  const entries = bins.entries()
  varint(out, entries.length)
  if (!entries.length) return
  const first = entries[0][0]
  const dense: number[] = []
  for (let i = first - bins.lo, end = entries[entries.length - 1][0] - bins.lo; i <= end; i++) varint(dense, bins.counts[i])
  const sparse: number[] = []
  entries.forEach(([k, n], i) => {
    if (i) varint(sparse, k - entries[i - 1][0])
    varint(sparse, n)
  })
  out.push(dense.length <= sparse.length ? 0 : 1)
  varint(out, zigzag(first))
  for (const b of dense.length <= sparse.length ? dense : sparse) out.push(b)
}

function decodeStore(r: { buf: Uint8Array; at: number }, bins: Bins): number {
  const m = readVarint(r)
  if (!m) return 0
  const mode = r.buf[r.at++]
  let key = unzigzag(readVarint(r))
  let total = 0
  if (mode === 0) {
    for (let found = 0; found < m; key++) {
      const n = readVarint(r)
      if (n) {
        bins.add(key, n)
        total += n
        found++
      }
    }
  } else {
    for (let i = 0; i < m; i++) {
      if (i) key += readVarint(r)
      const n = readVarint(r)
      bins.add(key, n)
      total += n
    }
  }
  return total
}

function varint(out: number[], n: number): void {
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80)
    n = Math.floor(n / 0x80)
  }
  out.push(n)
}

function readVarint(r: { buf: Uint8Array; at: number }): number {
  let n = 0
  let scale = 1
  for (;;) {
    const b = r.buf[r.at++]
    if (b === undefined) throw new Error('truncated sketch')
    n += (b & 0x7f) * scale
    if (b < 0x80) return n
    scale *= 0x80
  }
}

const zigzag = (n: number) => (n < 0 ? -2 * n - 1 : 2 * n)
const unzigzag = (n: number) => (n % 2 ? -(n + 1) / 2 : n / 2)

/** SQL columns of a point's bin: s (-1, 0, 1) and k (the key of |value|), as Sketch.accept would file it. */
export function binOf(sql: Db) {
  return sql`case when value > ${MIN_MAGNITUDE}::float8 then 1 when value < ${-MIN_MAGNITUDE}::float8 then -1 else 0 end as s,
    case when abs(value) > ${MIN_MAGNITUDE}::float8 then ceil(ln(abs(value)) / ${LN_GAMMA}::float8)::int else 0 end as k`
}

/**
 * The refresh's mark (a ClaimMark, shared/points/rollups.ts) of the gauge hours its `claimed` rollup_pending
 * rows touched, as needing a sketch rebuild (same statement as the claim, so a claimed point is never left
 * unmarked). Both storage paths.
 */
export function markDirty(sql: Db) {
  return sql`dirty as (
      insert into sketch_dirty (stat_id, hour)
      select distinct c.stat_id, date_trunc('hour', c.bucket, 'UTC') from claimed c
      join stats s on s.id = c.stat_id and s.kind = 'gauge'
      order by 1, 2
      on conflict do nothing
      returning 1
    )`
}

/**
 * Rebuilds the sketches of marked hours that are complete (the current hour is read raw until it ends, so
 * an hour is built about once rather than at every 2-second refresh), then the days that hold them (merged
 * from their hour sketches). One transaction: the marks go only with the sketches they produced. Marks of
 * stats being deleted are skipped (their delete cascades to them), as the rollups' claim skips pending rows.
 */
export async function refreshSketches(sql: Sql, limit = 5_000): Promise<{ hours: number; days: number; denseHours: number }> {
  return sql.begin(async (tx) => {
    const marked = await tx<{ stat_id: string; hour: Date }[]>`
      delete from sketch_dirty where ctid in (
        select d.ctid from sketch_dirty d join stats s on s.id = d.stat_id
        where d.hour < date_trunc('hour', now(), 'UTC') limit ${limit}
        for update of d skip locked for key share of s skip locked)
      returning stat_id, hour`
    if (!marked.length) return { hours: 0, days: 0, denseHours: 0 }
    const bins = await tx<{ stat_id: string; hour: Date; s: number; k: number; n: number }[]>`
      select stat_id, hour, s, k, count(*)::int as n from (
        select m.stat_id, m.hour, ${binOf(tx)}
        from unnest(${marked.map((m) => m.stat_id)}::uuid[], ${marked.map((m) => m.hour.toISOString())}::timestamptz[]) as m(stat_id, hour)
        cross join lateral stat_points(m.stat_id, m.hour, m.hour + interval '1 hour') p
      ) x group by 1, 2, 3, 4`
    const built = new Map<string, { stat_id: string; hour: Date; sketch: Sketch }>()
    for (const m of marked) built.set(`${m.stat_id}|${m.hour.getTime()}`, { stat_id: m.stat_id, hour: m.hour, sketch: new Sketch() })
    for (const b of bins) built.get(`${b.stat_id}|${b.hour.getTime()}`)!.sketch.add(b.s, b.k, b.n)
    const full = [...built.values()].filter((h) => h.sketch.count > 0)
    // An hour left without points (its stat's points were deleted) loses its sketch.
    await tx`delete from sketches_1h h using unnest(${marked.map((m) => m.stat_id)}::uuid[], ${marked.map((m) => m.hour.toISOString())}::timestamptz[]) as m(stat_id, hour)
      where h.stat_id = m.stat_id and h.bucket = m.hour`
    if (full.length) {
      await tx`insert into sketches_1h (stat_id, bucket, sketch)
        select stat_id, bucket, decode(hex, 'hex') from unnest(${full.map((h) => h.stat_id)}::uuid[], ${full.map((h) => h.hour.toISOString())}::timestamptz[], ${full.map((h) => h.sketch.encode().toString('hex'))}::text[]) as u(stat_id, bucket, hex)
        order by 1, 2`
    }
    // Minute sketches of the dense hours (sql/0034), the others' dropped: an hour holds all its minutes or none.
    await tx`delete from sketches_1m x using unnest(${marked.map((m) => m.stat_id)}::uuid[], ${marked.map((m) => m.hour.toISOString())}::timestamptz[]) as m(stat_id, hour)
      where x.stat_id = m.stat_id and x.bucket >= m.hour and x.bucket < m.hour + interval '1 hour'`
    const dense = full.filter((h) => h.sketch.count >= MINUTE_SKETCH_MIN_POINTS)
    if (dense.length) {
      const minutes = await tx<{ stat_id: string; minute: Date; s: number; k: number; n: number }[]>`
        select stat_id, minute, s, k, count(*)::int as n from (
          select m.stat_id, date_bin('1 minute', p.ts, timestamptz 'epoch') as minute, ${binOf(tx)}
          from unnest(${dense.map((h) => h.stat_id)}::uuid[], ${dense.map((h) => h.hour.toISOString())}::timestamptz[]) as m(stat_id, hour)
          cross join lateral stat_points(m.stat_id, m.hour, m.hour + interval '1 hour') p
        ) x group by 1, 2, 3, 4`
      const byMinute = new Map<string, { stat_id: string; minute: Date; sketch: Sketch }>()
      for (const r of minutes) {
        const key = `${r.stat_id}|${r.minute.getTime()}`
        let m = byMinute.get(key)
        if (!m) byMinute.set(key, (m = { stat_id: r.stat_id, minute: r.minute, sketch: new Sketch() }))
        m.sketch.add(r.s, r.k, r.n)
      }
      const list = [...byMinute.values()]
      await tx`insert into sketches_1m (stat_id, bucket, sketch)
        select stat_id, bucket, decode(hex, 'hex') from unnest(${list.map((m) => m.stat_id)}::uuid[], ${list.map((m) => m.minute.toISOString())}::timestamptz[], ${list.map((m) => m.sketch.encode().toString('hex'))}::text[]) as u(stat_id, bucket, hex)
        order by 1, 2`
    }
    // Coarse tiers: each period merged again from all its hour sketches, so the result does not depend on which hours changed.
    let days = 0
    for (const tier of COARSE_TIERS) {
      const every = `${tier.seconds} seconds`
      const rows = await tx<{ stat_id: string; period: Date; sketch: Uint8Array | null }[]>`
        with d as (select distinct stat_id, date_bin(${every}::interval, hour, timestamptz 'epoch') as period
                   from unnest(${marked.map((m) => m.stat_id)}::uuid[], ${marked.map((m) => m.hour.toISOString())}::timestamptz[]) as m(stat_id, hour))
        select d.stat_id, d.period, h.sketch
        from d left join sketches_1h h on h.stat_id = d.stat_id and h.bucket >= d.period and h.bucket < d.period + ${every}::interval`
      const byPeriod = new Map<string, { stat_id: string; period: Date; sketch: Sketch }>()
      for (const r of rows) {
        const key = `${r.stat_id}|${r.period.getTime()}`
        if (!byPeriod.has(key)) byPeriod.set(key, { stat_id: r.stat_id, period: r.period, sketch: new Sketch() })
        if (r.sketch) byPeriod.get(key)!.sketch.mergeEncoded(r.sketch)
      }
      const list = [...byPeriod.values()]
      await tx`delete from ${tx(tier.table)} x using unnest(${list.map((d) => d.stat_id)}::uuid[], ${list.map((d) => d.period.toISOString())}::timestamptz[]) as d(stat_id, period)
        where x.stat_id = d.stat_id and x.bucket = d.period`
      const full = list.filter((d) => d.sketch.count > 0)
      if (full.length) {
        await tx`insert into ${tx(tier.table)} (stat_id, bucket, sketch)
          select stat_id, bucket, decode(hex, 'hex')
          from unnest(${full.map((d) => d.stat_id)}::uuid[], ${full.map((d) => d.period.toISOString())}::timestamptz[], ${full.map((d) => d.sketch.encode().toString('hex'))}::text[]) as u(stat_id, bucket, hex)
          order by 1, 2`
      }
      if (tier.seconds === 86_400) days = list.length
    }
    return { hours: marked.length, days, denseHours: dense.length }
  }) as Promise<{ hours: number; days: number; denseHours: number }>
}
