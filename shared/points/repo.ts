// Persisting accepted points, exactly once per batch (docs/decisions.md §D-3).
import type { Db, Sql, TxSql } from '../db.js'
import type { QueuedPoint } from '../jobs.js'
import { encodeBlock, type EncodedBlock } from './blocks.js'
import { behindEdge, compactionCutoff, markBehindEdge } from './compaction.js'
import { insertParked, isDataError, type ParkedPoint } from './parked.js'
import { usesTimescale } from './storage.js'

export interface ApplyResult {
  applied: boolean
  stored: number
  duplicates: number
}

/**
 * Stores one batch in one transaction together with the record that it was
 * applied, so a job that runs twice stores nothing twice. Points whose ikey
 * was already used at the same stat and second are skipped (first write
 * wins), and points of stats deleted since they were queued die with the stat.
 * The batch's per-minute aggregates go to rollup_pending in the same statement.
 * The statement is the same on plain PostgreSQL and TimescaleDB: there the
 * continuous aggregates take the points in by themselves and rollup_pending
 * only tells the refresh job which stats took new points (rollup_state); an
 * append, so concurrent batches of one stat never contend on a row.
 */
export async function applyBatch(sql: Sql, batchId: string, points: QueuedPoint[]): Promise<ApplyResult> {
  const r = await applyBatches(sql, [{ id: batchId, points }])
  return { applied: r.applied.length > 0, stored: r.stored, duplicates: r.duplicates }
}

export interface Batch {
  id: string
  points: QueuedPoint[]
}

type BatchesResult = { applied: string[]; stored: number; duplicates: number }

/**
 * The CTE that appends the minute aggregates of a statement's `inserted` rows to rollup_pending, and marks the
 * compaction when they may be `behind` its hot edge (behindEdge, compactionPasses).
 */
export const pendingOf = (sql: Db, behind: boolean) => sql`pending as (
  insert into rollup_pending (stat_id, bucket, count, sum, min, max)
  select stat_id, date_bin('1 minute', ts, timestamptz 'epoch'), count(*), sum(value), min(value), max(value)
  from inserted group by 1, 2
  returning 1
)${behind ? sql`, ${markBehindEdge(sql)}` : sql``}`

/**
 * Settles a persist job whose add failed: marks its batch applied with no points unless a worker already stored
 * it. True when it was marked (the batch will never be stored: a worker that gets the job later finds it applied
 * and skips its points), false when it was stored. The mark and a worker's record of the batch are the same
 * primary key, so exactly one of the two wins.
 */
export async function cancelBatch(sql: Sql, batchId: string): Promise<boolean> {
  const marked = await sql`insert into applied_batches (id, points) values (${batchId}, 0) on conflict do nothing returning id`
  return marked.length === 1
}

/**
 * Several batches at once (the persist worker's group commit): the ones
 * already recorded as applied are skipped, the others are stored and recorded
 * together, all or none. `now` (milliseconds) is the clock the write blocks'
 * cutoff and the compaction's marks go by (a bench replaying a day sets it).
 */
export async function applyBatches(sql: Sql, batches: Batch[], now = Date.now()): Promise<BatchesResult> {
  // The same batch twice in one call (a job re-run while its first run is still here) is one batch.
  const unique = [...new Map(batches.map((b) => [b.id, b])).values()]
  if (unique.some((b) => b.points.some((p) => p[3] !== null))) return applyWithIkeys(sql, unique, now)
  // TimescaleDB keeps every point in its hypertable (its continuous aggregates read rows, and it compresses itself).
  const cutoff = (await usesTimescale(sql)) ? -Infinity : compactionCutoff(new Date(now)).getTime() / 1000
  return applyPlain(sql, unique, splitBlocks(unique, cutoff), now)
}

/**
 * A batch's points of one stat and one UTC day past the hot days are written as one block (sql/0032) when
 * there are at least this many: a backfill or a client sending history. Fewer stay rows, as do the points of
 * today and yesterday, which the alert evaluator, the percentile back-test and the write path's same-second
 * checks read as rows; the compaction merges either into the day's block. A block holds one batch's points,
 * so that it is stored exactly when its batch is, like a row.
 */
export const MIN_WRITE_BLOCK_POINTS = 8
const DAY_S = 86_400

interface WriteBlock {
  /** The batch's position in the statement, from 1. */
  bix: number
  statId: string
  block: EncodedBlock
  /** The block's minute aggregates for rollup_pending, the rows' counterpart of pendingOf: [bucket, count, sum, min, max]. */
  minutes: Array<[number, number, number, number, number]>
}

/** Each batch's points split into the blocks it writes and the points that stay rows (`cutoff`: seconds). */
export function splitBlocks(batches: Batch[], cutoff: number): { blocks: WriteBlock[]; rows: QueuedPoint[][] } {
  const blocks: WriteBlock[] = []
  const rows = batches.map((b, i) => {
    // Point positions by stat, then by day number: a batch is mostly one stat or a few.
    const groups = new Map<string, Map<number, number[]>>()
    b.points.forEach((p, k) => {
      if (p[1] >= cutoff) return
      let days = groups.get(p[0])
      if (!days) groups.set(p[0], (days = new Map()))
      const d = Math.floor(p[1] / DAY_S)
      const g = days.get(d)
      if (g) g.push(k)
      else days.set(d, [k])
    })
    let taken: Uint8Array | null = null
    for (const [statId, days] of groups) {
      for (const [d, ix] of days) {
        if (ix.length < MIN_WRITE_BLOCK_POINTS) continue
        const ts = ix.map((k) => b.points[k][1])
        const values = ix.map((k) => b.points[k][2])
        blocks.push({ bix: i + 1, statId, block: encodeBlock(d * DAY_S, ts, values), minutes: minutesOf(ts, values) })
        taken ??= new Uint8Array(b.points.length)
        for (const k of ix) taken[k] = 1
      }
    }
    return taken ? b.points.filter((_, k) => !taken[k]) : b.points
  })
  return { blocks, rows }
}

/** Per minute (date_bin's buckets from the epoch) of some points of one stat: count, sum, min and max. */
function minutesOf(ts: number[], values: number[]): WriteBlock['minutes'] {
  const out = new Map<number, WriteBlock['minutes'][number]>()
  for (let i = 0; i < ts.length; i++) {
    const v = values[i]
    const bucket = Math.floor(ts[i] / 60) * 60
    const m = out.get(bucket)
    if (!m) out.set(bucket, [bucket, 1, v, v, v])
    else {
      m[1]++
      m[2] += v
      if (v < m[3]) m[3] = v
      if (v > m[4]) m[4] = v
    }
  }
  return [...out.values()]
}

/**
 * The shared part of one persist statement: record the batches (those already
 * recorded store nothing), lock their stats against a concurrent delete (which
 * waits for this commit, then removes what is stored here), and list the
 * points of fresh batches and live stats as `incoming` (queued points die with
 * their stat). Each point names its batch and stat by position in two short
 * lists, so that PostgreSQL parses a few small numbers per point rather than
 * two 36-character ids. One statement is one transaction and one round trip,
 * and needs no client-side transaction: a connection lost mid-statement
 * leaves nothing half-done on either side. `rows`, when given, are the points
 * of each batch that go to `incoming`; the others are in `blocks`, whose stats
 * are locked and listed as well.
 */
function incomingOf(sql: Sql, batches: Batch[], opts: { ikeys?: boolean; rows?: QueuedPoint[][]; blocks?: WriteBlock[] } = {}) {
  const statIds: string[] = []
  const statIx = new Map<string, number>()
  const bix: number[] = []
  const six: number[] = []
  const ts: number[] = []
  const values: number[] = []
  const ikeys: Array<string | null> = []
  let oldest = Number.POSITIVE_INFINITY
  batches.forEach((b, i) => {
    for (const [statId, t, value, ikey] of opts.rows?.[i] ?? b.points) {
      let ix = statIx.get(statId)
      if (ix === undefined) statIx.set(statId, (ix = statIds.push(statId)))
      bix.push(i + 1)
      six.push(ix)
      ts.push(t)
      if (t < oldest) oldest = t
      values.push(value)
      if (opts.ikeys) ikeys.push(ikey)
    }
  })
  for (const { statId } of opts.blocks ?? []) if (!statIx.has(statId)) statIx.set(statId, statIds.push(statId))
  const ids = batches.map((b) => b.id)
  const points = opts.ikeys
    ? sql`unnest(${numbers(bix)}::int[], ${numbers(six)}::int[], ${numbers(ts)}::bigint[], ${numbers(values)}::float8[], ${ikeys}::text[]) with ordinality as u(bix, six, t, value, ikey, ord)`
    : sql`unnest(${numbers(bix)}::int[], ${numbers(six)}::int[], ${numbers(ts)}::bigint[], ${numbers(values)}::float8[]) as u(bix, six, t, value)`
  const cte = sql`
    fresh as (
      insert into applied_batches (id, points)
      select * from unnest(${ids}::text[], ${batches.map((b) => b.points.length)}::int[])
      on conflict do nothing returning id
    ),
    fresh_ix as (
      select b.ix from unnest(${ids}::text[]) with ordinality as b(id, ix) join fresh using (id)
    ),
    locked as (
      select id from stats where id = any(${statIds}::uuid[]) for key share
    ),
    live as (
      select s.id, s.ix from unnest(${statIds}::uuid[]) with ordinality as s(id, ix) join locked using (id)
    ),
    incoming as (
      select ${opts.ikeys ? sql`u.ord, u.ikey,` : sql``} live.id as stat_id, to_timestamp(u.t) as ts, u.value
      from ${points}
      join live on live.ix = u.six
      where u.bix in (select ix from fresh_ix)
    )`
  return { cte, statIx, oldest }
}

/**
 * A numeric array parameter as PostgreSQL's array text, built in one join: postgres.js serializes an array
 * element by element (a string, two escaping regexes and quotes each), which was about 40 % of the worker's
 * CPU per point in a persist statement. The numbers are finite (the job schema checks them), so String()
 * gives each exactly, in the form PostgreSQL's input reads back to the same double.
 */
function numbers(xs: Array<number | bigint>): string {
  return `{${xs.join(',')}}`
}

/** Batches without ikeys, the common case: record, lock, store (rows and write blocks), append the minute aggregates. */
async function applyPlain(sql: Sql, batches: Batch[], split: ReturnType<typeof splitBlocks>, now: number): Promise<BatchesResult> {
  const { cte, statIx, oldest } = incomingOf(sql, batches, { rows: split.rows, blocks: split.blocks })
  const [row] = await sql<{ applied: string[] | null; stored: number }[]>`
    with ${cte},
    inserted as (
      insert into points (stat_id, ts, value) select stat_id, ts, value from incoming
      returning stat_id, ts, value
    ),
    ${pendingOf(sql, split.blocks.length > 0 || behindEdge(oldest, now))},
    ${split.blocks.length ? blocksOf(sql, split.blocks, statIx) : sql`blocks as (select 0 as n where false)`}
    select (select array_agg(id) from fresh) as applied,
           ((select count(*) from inserted) + (select coalesce(sum(n), 0) from blocks))::int as stored, (select count(*) from pending)::int as buckets`
  return { applied: row.applied ?? [], stored: row.stored, duplicates: 0 }
}

/**
 * The CTEs that write a statement's blocks of fresh batches and live stats, with their minute aggregates. The
 * blocks' arrays go as one flat array each, every block a slice of them at its offset; a block keeps its values
 * in ivals or in fvals (by its scale), and the other array holds zeros there, so that one offset serves all three.
 */
function blocksOf(sql: Sql, blocks: WriteBlock[], statIx: Map<string, number>) {
  const dts: number[] = []
  const ivals: Array<number | bigint> = []
  const fvals: number[] = []
  const offsets: number[] = []
  for (const { block: b } of blocks) {
    offsets.push(dts.length)
    for (let i = 0; i < b.n; i++) {
      dts.push(b.dts[i])
      ivals.push(b.ivals ? b.ivals[i] : 0)
      fvals.push(b.fvals ? b.fvals[i] : 0)
    }
  }
  const col = (f: (b: WriteBlock) => number | null) => `{${blocks.map((b) => f(b) ?? 'NULL').join(',')}}`
  const minutes = blocks.flatMap((b) => b.minutes.map((m) => [b.bix, statIx.get(b.statId)!, ...m]))
  const mcol = (k: number) => numbers(minutes.map((m) => m[k]))
  return sql`blocks as (
    insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
    select live.id, to_timestamp(b.day), nextval('point_write_seq'), b.n, to_timestamp(b.first), to_timestamp(b.last),
           a.dts[b.o + 1 : b.o + b.n], b.scale,
           case when b.scale is not null then a.ivals[b.o + 1 : b.o + b.n] end,
           case when b.scale is null then a.fvals[b.o + 1 : b.o + b.n] end
    from unnest(${col((b) => b.bix)}::int[], ${col((b) => statIx.get(b.statId)!)}::int[], ${col((b) => b.block.day)}::bigint[],
                ${col((b) => b.block.n)}::int[], ${col((b) => b.block.first)}::bigint[], ${col((b) => b.block.last)}::bigint[],
                ${col((b) => b.block.scale)}::float8[], ${numbers(offsets)}::int[])
         as b(bix, six, day, n, first, last, scale, o)
    join live on live.ix = b.six
    cross join (select ${numbers(dts)}::int4[] as dts, ${numbers(ivals)}::int8[] as ivals, ${numbers(fvals)}::float8[] as fvals) a
    where b.bix in (select ix from fresh_ix)
    returning n
  ),
  block_minutes as (
    insert into rollup_pending (stat_id, bucket, count, sum, min, max)
    select live.id, to_timestamp(m.bucket), m.count, m.sum, m.min, m.max
    from unnest(${mcol(0)}::int[], ${mcol(1)}::int[], ${mcol(2)}::bigint[], ${mcol(3)}::int[], ${mcol(4)}::float8[], ${mcol(5)}::float8[], ${mcol(6)}::float8[])
         as m(bix, six, bucket, count, sum, min, max)
    join live on live.ix = m.six
    where m.bix in (select ix from fresh_ix)
    returning 1
  )`
}

/**
 * Batches some of whose points carry an ikey: the same statement, where a keyed point is stored only if its
 * (stat, second, ikey) claims a new point_ikeys row (first write wins; a concurrent claim of the same key
 * waits for the other's commit and then loses). Within the statement the same key twice: its first point wins.
 */
async function applyWithIkeys(sql: Sql, batches: Batch[], now: number): Promise<BatchesResult> {
  const { cte, oldest } = incomingOf(sql, batches, { ikeys: true })
  const [row] = await sql<{ applied: string[] | null; stored: number; alive: number }[]>`
    with ${cte},
    firsts as (
      select distinct on (stat_id, ts, ikey) ord, stat_id, ts, ikey from incoming where ikey is not null order by stat_id, ts, ikey, ord
    ),
    claimed as (
      insert into point_ikeys (stat_id, ts, ikey) select stat_id, ts, ikey from firsts
      on conflict do nothing returning stat_id, ts, ikey
    ),
    inserted as (
      insert into points (stat_id, ts, value)
      select i.stat_id, i.ts, i.value from incoming i
      where i.ikey is null or i.ord in (select f.ord from firsts f join claimed c using (stat_id, ts, ikey))
      returning stat_id, ts, value
    ),
    ${pendingOf(sql, behindEdge(oldest, now))}
    select (select array_agg(id) from fresh) as applied, (select count(*) from inserted)::int as stored,
           (select count(*) from incoming)::int as alive, (select count(*) from pending)::int as buckets`
  return { applied: row.applied ?? [], stored: row.stored, duplicates: row.alive - row.stored }
}

/** Records the batches as applied; returns the ids that were not already (a re-run stores nothing). */
async function recordBatches(tx: TxSql, batches: Batch[]): Promise<string[]> {
  const fresh = await tx<{ id: string }[]>`
    insert into applied_batches (id, points)
    select * from unnest(${batches.map((b) => b.id)}::text[], ${batches.map((b) => b.points.length)}::int[])
    on conflict do nothing returning id`
  return fresh.map((r) => r.id)
}

/**
 * Locks the points' stats against a concurrent delete (which waits for this commit, then removes what
 * is stored here) and keeps only points of stats that still exist: queued points die with their stat.
 */
async function livePoints(tx: TxSql, points: QueuedPoint[]): Promise<QueuedPoint[]> {
  if (!points.length) return points
  const ids = [...new Set(points.map((p) => p[0]))]
  const live = new Set((await tx<{ id: string }[]>`select id from stats where id = any(${ids}::uuid[]) for key share`).map((r) => r.id))
  return points.filter((p) => live.has(p[0]))
}

/** Stores points of live stats, skipping those whose ikey was already used at the same stat and second. */
async function storePoints(tx: TxSql, alive: QueuedPoint[]): Promise<{ stored: number; duplicates: number }> {
  if (!alive.length) return { stored: 0, duplicates: 0 }
  let keep = alive
  const keyed = alive.filter((p) => p[3] !== null)
  if (keyed.length) {
    const fresh = await tx<{ stat_id: string; t: number; ikey: string }[]>`
      insert into point_ikeys (stat_id, ts, ikey)
      select u.stat_id, to_timestamp(u.t), u.ikey
      from unnest(${keyed.map((p) => p[0])}::uuid[], ${keyed.map((p) => p[1])}::bigint[], ${keyed.map((p) => p[3] as string)}::text[]) as u(stat_id, t, ikey)
      on conflict do nothing
      returning stat_id, extract(epoch from ts)::bigint as t, ikey`
    const won = new Set(fresh.map((r) => `${r.stat_id}|${r.t}|${r.ikey}`))
    // Within one batch the same key may appear twice: only its first point wins.
    keep = alive.filter((p) => p[3] === null || won.delete(`${p[0]}|${p[1]}|${p[3]}`))
  }
  if (!keep.length) return { stored: 0, duplicates: alive.length }

  const [{ stored }] = await tx<{ stored: number }[]>`
    with incoming as (
      select u.stat_id, to_timestamp(u.t) as ts, u.value
      from unnest(${keep.map((p) => p[0])}::uuid[], ${keep.map((p) => p[1])}::bigint[], ${keep.map((p) => p[2])}::float8[]) as u(stat_id, t, value)
    ),
    inserted as (
      insert into points (stat_id, ts, value) select stat_id, ts, value from incoming returning stat_id, ts, value
    ),
    ${pendingOf(tx, behindEdge(keep.reduce((a, p) => Math.min(a, p[1]), Number.POSITIVE_INFINITY)))}
    select (select count(*) from inserted)::int as stored, (select count(*) from pending)::int as buckets`
  return { stored, duplicates: alive.length - keep.length }
}

/**
 * One batch that PostgreSQL refused on its data (see isDataError): stored in one transaction as
 * applyBatches would, except that a refused set of points is split in halves, each half under a
 * savepoint, until the refused points are alone. Every other point is stored exactly once (the batch
 * is recorded as applied in the same transaction), and the refused ones are parked with the reason.
 * Costs about two statements per halving for each refused point; only runs after a refusal.
 */
export async function applyIsolating(sql: Sql, batch: Batch): Promise<BatchesResult & { parked: ParkedPoint[] }> {
  return sql.begin(async (tx) => {
    const parked: ParkedPoint[] = []
    const applied = await recordBatches(tx, [batch])
    if (!applied.length) return { applied, stored: 0, duplicates: 0, parked }
    const store = async (points: QueuedPoint[]): Promise<{ stored: number; duplicates: number }> => {
      try {
        return await tx.savepoint((sp) => storePoints(sp, points))
      } catch (err) {
        if (!isDataError(err)) throw err
        if (points.length === 1) {
          parked.push({ point: points[0], code: (err as { code: string }).code, reason: (err as Error).message })
          return { stored: 0, duplicates: 0 }
        }
        const half = Math.ceil(points.length / 2)
        const a = await store(points.slice(0, half))
        const b = await store(points.slice(half))
        return { stored: a.stored + b.stored, duplicates: a.duplicates + b.duplicates }
      }
    }
    const result = await store(await livePoints(tx, batch.points))
    await insertParked(tx, batch.id, parked)
    return { applied, ...result, parked }
  }) as Promise<BatchesResult & { parked: ParkedPoint[] }>
}
