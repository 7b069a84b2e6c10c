// Persisting accepted points, exactly once per batch (DESIGN.md decision 3).
import type { Db, Sql, TxSql } from '../db.js'
import type { QueuedPoint } from '../jobs.js'
import { encodeBlock, type EncodedBlock } from './blocks.js'
import { compactionCutoff } from './compaction.js'
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

/** The CTE that appends the minute aggregates of a statement's stored points (its `inserted` rows) to rollup_pending. */
export const pendingOf = (sql: Db, stored = sql`inserted`) => sql`pending as (
  insert into rollup_pending (stat_id, bucket, count, sum, min, max)
  select stat_id, date_bin('1 minute', ts, timestamptz 'epoch'), count(*), sum(value), min(value), max(value)
  from ${stored} group by 1, 2
  returning 1
)`

/**
 * Several batches at once (the persist worker's group commit): the ones
 * already recorded as applied are skipped, the others are stored and recorded
 * together, all or none.
 */
export async function applyBatches(sql: Sql, batches: Batch[]): Promise<BatchesResult> {
  // The same batch twice in one call (a job re-run while its first run is still here) is one batch.
  const unique = [...new Map(batches.map((b) => [b.id, b])).values()]
  if (unique.some((b) => b.points.some((p) => p[3] !== null))) return applyWithIkeys(sql, unique)
  // TimescaleDB keeps every point in its hypertable (its continuous aggregates read rows, and it compresses itself).
  const blocks = (await usesTimescale(sql)) ? null : writeBlocks(unique, compactionCutoff(new Date()).getTime() / 1000)
  return applyPlain(sql, unique, blocks)
}

/**
 * A statement's points of one stat and one UTC day past the hot days are written as one block (sql/0032) when
 * there are at least this many: a backfill or a client sending history. Fewer stay rows, as do the points of
 * today and yesterday, which the alert evaluator, the percentile back-test and the write path's same-second
 * checks read as rows; the compaction merges either into the day's block.
 */
export const MIN_WRITE_BLOCK_POINTS = 8
const DAY_S = 86_400

interface WriteBlocks {
  /** Each block with the stat it is of, as a position in the statement's stat list (see incomingOf). */
  blocks: Array<{ statId: string; block: EncodedBlock }>
  /** Per point of the statement, in order: whether it is in one of the blocks. */
  inBlock: Uint8Array
}

/** The blocks a statement writes: its points grouped by stat and day, the groups before `cutoff` (seconds) large enough. */
export function writeBlocks(batches: Batch[], cutoff: number): WriteBlocks | null {
  const groups = new Map<string, number[]>()
  let i = 0
  for (const b of batches) {
    for (const p of b.points) {
      if (p[1] < cutoff) {
        const key = `${p[0]}|${Math.floor(p[1] / DAY_S)}`
        const g = groups.get(key)
        if (g) g.push(i)
        else groups.set(key, [i])
      }
      i++
    }
  }
  const all = batches.flatMap((b) => b.points)
  const inBlock = new Uint8Array(all.length)
  const blocks: WriteBlocks['blocks'] = []
  for (const ix of groups.values()) {
    if (ix.length < MIN_WRITE_BLOCK_POINTS) continue
    const [statId, t0] = all[ix[0]]
    blocks.push({ statId, block: encodeBlock(Math.floor(t0 / DAY_S) * DAY_S, ix.map((j) => all[j][1]), ix.map((j) => all[j][2])) })
    for (const j of ix) inBlock[j] = 1
  }
  return blocks.length ? { blocks, inBlock } : null
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
 * leaves nothing half-done on either side.
 */
function incomingOf(sql: Sql, batches: Batch[], opts: { ikeys?: boolean; inBlock?: Uint8Array } = {}) {
  const statIds: string[] = []
  const statIx = new Map<string, number>()
  const bix: number[] = []
  const six: number[] = []
  const ts: number[] = []
  const values: number[] = []
  const ikeys: Array<string | null> = []
  batches.forEach((b, i) => {
    for (const [statId, t, value, ikey] of b.points) {
      let ix = statIx.get(statId)
      if (ix === undefined) statIx.set(statId, (ix = statIds.push(statId)))
      bix.push(i + 1)
      six.push(ix)
      ts.push(t)
      values.push(value)
      if (opts.ikeys) ikeys.push(ikey)
    }
  })
  const ids = batches.map((b) => b.id)
  const points = opts.ikeys
    ? sql`unnest(${numbers(bix)}::int[], ${numbers(six)}::int[], ${numbers(ts)}::bigint[], ${numbers(values)}::float8[], ${ikeys}::text[]) with ordinality as u(bix, six, t, value, ikey, ord)`
    : opts.inBlock
      ? sql`unnest(${numbers(bix)}::int[], ${numbers(six)}::int[], ${numbers(ts)}::bigint[], ${numbers(values)}::float8[], ${numbers(Array.from(opts.inBlock))}::int2[]) as u(bix, six, t, value, blk)`
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
      select ${opts.ikeys ? sql`u.ord, u.ikey,` : opts.inBlock ? sql`u.blk,` : sql``} live.id as stat_id, to_timestamp(u.t) as ts, u.value
      from ${points}
      join live on live.ix = u.six
      where u.bix in (select ix from fresh_ix)
    )`
  return { cte, statIx }
}

/**
 * A numeric array parameter as PostgreSQL's array text, built in one join: postgres.js serializes an array
 * element by element (a string, two escaping regexes and quotes each), which was about 40 % of the worker's
 * CPU per point in a persist statement. The numbers are finite (the job schema checks them), so String()
 * gives each exactly, in the form PostgreSQL's input reads back to the same double.
 */
function numbers(xs: number[]): string {
  return `{${xs.join(',')}}`
}

/**
 * Batches without ikeys, the common case: record, lock, store, append the minute aggregates. With write
 * blocks (see writeBlocks), their points go to point_blocks when every batch of the statement is fresh, and
 * to rows like the others when some batch was already applied: a block may hold points of several batches,
 * and those of an applied batch must not be stored again. Either way every incoming point is stored once.
 */
async function applyPlain(sql: Sql, batches: Batch[], writes: WriteBlocks | null): Promise<BatchesResult> {
  const { cte, statIx } = incomingOf(sql, batches, { inBlock: writes?.inBlock })
  const [row] = await sql<{ applied: string[] | null; stored: number }[]>`
    with ${cte},
    inserted as (
      insert into points (stat_id, ts, value) select stat_id, ts, value from incoming
      ${writes ? sql`where incoming.blk = 0 or not ${allFresh(sql, batches.length)}` : sql``}
      returning 1
    ),
    ${writes ? sql`${blocksOf(sql, writes, statIx, batches.length)},` : sql``}
    ${pendingOf(sql, sql`incoming`)}
    select (select array_agg(id) from fresh) as applied, (select count(*) from incoming)::int as stored, (select count(*) from pending)::int as buckets`
  return { applied: row.applied ?? [], stored: row.stored, duplicates: 0 }
}

/** Whether every one of the statement's `batches` is fresh (none was applied before). */
const allFresh = (sql: Sql, batches: number) => sql`(select count(*) from fresh) = ${batches}`

/**
 * The CTE that writes a statement's blocks, each under its live stat, when all its `batches` are fresh. The blocks' arrays go
 * as one flat array each, every block a slice of them at its offset; a block keeps its values in ivals or in
 * fvals (by its scale), and the other array holds zeros there, so that one offset serves all three.
 */
function blocksOf(sql: Sql, writes: WriteBlocks, statIx: Map<string, number>, batches: number) {
  const dts: number[] = []
  const ivals: Array<number | bigint> = []
  const fvals: number[] = []
  const offsets: number[] = []
  for (const { block: b } of writes.blocks) {
    offsets.push(dts.length)
    for (let i = 0; i < b.n; i++) {
      dts.push(b.dts[i])
      ivals.push(b.ivals ? b.ivals[i] : 0)
      fvals.push(b.fvals ? b.fvals[i] : 0)
    }
  }
  const col = (f: (b: EncodedBlock) => number | null) => `{${writes.blocks.map(({ block }) => f(block) ?? 'NULL').join(',')}}`
  return sql`blocks as (
    insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
    select live.id, to_timestamp(b.day), nextval('point_write_seq'), b.n, to_timestamp(b.first), to_timestamp(b.last),
           a.dts[b.o + 1 : b.o + b.n], b.scale,
           case when b.scale is not null then a.ivals[b.o + 1 : b.o + b.n] end,
           case when b.scale is null then a.fvals[b.o + 1 : b.o + b.n] end
    from unnest(${numbers(writes.blocks.map((w) => statIx.get(w.statId)!))}::int[], ${col((b) => b.day)}::bigint[], ${col((b) => b.n)}::int[],
                ${col((b) => b.first)}::bigint[], ${col((b) => b.last)}::bigint[], ${col((b) => b.scale)}::float8[], ${numbers(offsets)}::int[])
         as b(six, day, n, first, last, scale, o)
    join live on live.ix = b.six
    cross join (select ${numbers(dts)}::int4[] as dts, ${`{${ivals.join(',')}}`}::int8[] as ivals, ${numbers(fvals)}::float8[] as fvals) a
    where ${allFresh(sql, batches)}
    returning 1
  )`
}

/**
 * Batches some of whose points carry an ikey: the same statement, where a keyed point is stored only if its
 * (stat, second, ikey) claims a new point_ikeys row (first write wins; a concurrent claim of the same key
 * waits for the other's commit and then loses). Within the statement the same key twice: its first point wins.
 */
async function applyWithIkeys(sql: Sql, batches: Batch[]): Promise<BatchesResult> {
  const [row] = await sql<{ applied: string[] | null; stored: number; alive: number }[]>`
    with ${incomingOf(sql, batches, { ikeys: true }).cte},
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
    ${pendingOf(sql)}
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
    ${pendingOf(tx)}
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
