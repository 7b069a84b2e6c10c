// Compaction: a stat's points past the hot days move from the row-per-point
// `points` table into that stat's day block (sql/0027), 133 bytes a point becoming a few.
//
// Each (stat, day) is one transaction that deletes the day's hot rows and writes the block with
// them merged in, so a crash at any moment leaves either the rows or the block, never both or
// neither, and the next pass carries on where this one stopped. A late backfill into a day
// already compacted lands in `points` like any write, or as a write block when it brings many
// points of the day at once (sql/0032); the next pass decodes the block, merges the new rows and
// write blocks in and writes it again. Readers see all of them in the meantime (stat_points()).
import type { Sql } from '../db.js'
import { usesTimescale } from './storage.js'

const DAY_MS = 86_400_000

/**
 * Days before this are compacted: the points of today and yesterday (UTC) stay rows. The hot
 * table then always holds at least the last 24 hours, which is what the alert evaluator, the
 * "latest point" reads and the write path's same-second checks mostly look at, and a day is
 * compacted once, whole, rather than rewritten every pass as points arrive.
 */
export function compactionCutoff(now: Date): Date {
  return new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - DAY_MS)
}

/**
 * One lock per block, shared with retention's rewrite of a straddling block: two writers of one
 * block would each merge into the version they read and the second would drop the first's points.
 */
export const blockLock = (statId: string, day: Date) => `${statId}|${day.toISOString()}`

export interface CompactionResult {
  blocks: number
  points: number
  /** Set when the pass rebuilt the hot table's index (see shrinkHotIndex): its bytes before and after. */
  hotIndex?: { before: number; after: number }
}

/** Bytes a (stat_id, ts) entry of the hot table's B-tree takes with its share of the page (bench:storage: 73). */
const INDEX_BYTES_PER_ROW = 73
/** The index is rebuilt when it holds this many times what its live rows need... */
const INDEX_BLOAT_FACTOR = 4
/** ...and at least this many bytes: below it, the pages it would give back are not worth a rebuild. */
export const INDEX_REBUILD_MIN_BYTES = 64 * 1024 * 1024

/**
 * Gives back the disk of the hot table's index once a pass has emptied much of the table. VACUUM makes an
 * emptied heap's pages free and trims its end, but a B-tree keeps its pages: after a backfill burst or a
 * first compaction of old history, the (stat_id, ts) index stays at the size of its peak (870 MB for 12
 * million points moved to 23 MB of blocks, bench:storage). In steady state the table holds about two days
 * and a pass moves one of them, so the index never reaches the bloat factor and is left alone.
 *
 * REINDEX CONCURRENTLY: writes and reads go on while it builds. One at a time per database (a session
 * advisory lock on a reserved connection); one that fails leaves an invalid copy, which is dropped.
 * Live rows are estimated from a 1 % sample of the heap's pages: the statistics collector lags the deletes.
 */
export async function shrinkHotIndex(sql: Sql, minBytes = INDEX_REBUILD_MIN_BYTES): Promise<{ before: number; after: number } | null> {
  const size = async () => Number((await sql<{ n: string }[]>`select pg_relation_size('points_stat_ts_idx')::text as n`)[0].n)
  const before = await size()
  if (before < minBytes) return null
  const [{ rows }] = await sql<{ rows: number }[]>`select (count(*) * 100)::float8 as rows from points tablesample system (1)`
  if (before < INDEX_BLOAT_FACTOR * INDEX_BYTES_PER_ROW * rows) return null
  const conn = await sql.reserve()
  try {
    const [{ got }] = await conn<{ got: boolean }[]>`select pg_try_advisory_lock(27, 1) as got`
    if (!got) return null
    try {
      await conn`set statement_timeout = 0`
      // A rebuild cut off earlier (a lost connection) left its invalid copy; only the lock holder builds one.
      const dropCopy = () => conn.unsafe('drop index concurrently if exists points_stat_ts_idx_ccnew')
      await dropCopy()
      await conn.unsafe('reindex index concurrently points_stat_ts_idx').catch(async (err) => {
        await dropCopy().catch(() => {})
        throw err
      })
    } finally {
      await conn`reset statement_timeout`.catch(() => {})
      await conn`select pg_advisory_unlock(27, 1)`.catch(() => {})
    }
  } finally {
    conn.release()
  }
  return { before, after: await size() }
}

/**
 * Moves one stat's hot rows of one UTC day, and the day's write blocks (sql/0032), into its block 0;
 * returns how many points moved (0: nothing to do).
 */
export async function compactDay(sql: Sql, statId: string, day: Date): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(26, hashtext(${blockLock(statId, day)}))`
    // The stat is held FOR KEY SHARE like a persist transaction does: a concurrent delete waits for this
    // commit and then removes the block too; a stat already deleted moves nothing (its rows are going).
    // Rows off whole seconds (none of today's writers make them) stay hot: the block stores seconds.
    const [row] = await tx<{ moved: number }[]>`
      with live as (select id from stats where id = ${statId} for key share),
      moved as (
        delete from points
        where stat_id = ${statId} and ts >= ${day} and ts < ${day}::timestamptz + interval '1 day'
          and ts = date_trunc('second', ts) and exists (select 1 from live)
        returning ts, value
      ),
      writes as (
        delete from point_blocks where stat_id = ${statId} and day = ${day} and seq > 0 and exists (select 1 from live)
        returning n, dts, scale, ivals, fvals
      ),
      old as (
        select d.ts, d.value from point_blocks b
        cross join lateral point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d
        where b.stat_id = ${statId} and b.day = ${day} and b.seq = 0
        union all
        select d.ts, d.value from writes w cross join lateral point_block_decode(${day}, w.dts, w.scale, w.ivals, w.fvals) d
      ),
      merged as (select array_agg(ts) as ts, array_agg(value) as value from (select * from moved union all select * from old) a),
      saved as (
        insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
        select ${statId}, ${day}, 0, e.n, e.first_ts, e.last_ts, e.dts, e.scale, e.ivals, e.fvals
        from merged cross join lateral point_block_encode(${day}, merged.ts, merged.value) e
        where exists (select 1 from moved) or exists (select 1 from writes)
        on conflict (stat_id, day, seq) do update set n = excluded.n, first_ts = excluded.first_ts, last_ts = excluded.last_ts,
          dts = excluded.dts, scale = excluded.scale, ivals = excluded.ivals, fvals = excluded.fvals
        returning 1
      )
      select ((select count(*) from moved) + (select coalesce(sum(n), 0) from writes))::int as moved, (select count(*) from saved)::int as saved`
    return row.moved
  }) as Promise<number>
}

/**
 * One pass: every stat whose oldest hot row is before the cutoff has those days compacted, oldest
 * first. Idempotent (a day with no hot rows left is skipped) and resumable (each day commits alone).
 * `stopAfter` bounds a pass's work; the rest waits for the next one. A pass that moved points ends by
 * giving back the hot index's disk where they leave it bloated (shrinkHotIndex; `indexMinBytes` for tests).
 */
export async function compactPoints(
  sql: Sql,
  now: Date,
  opts: { stopAfter?: number; indexMinBytes?: number } = {},
): Promise<CompactionResult> {
  const out = await compactDays(sql, now, opts)
  if (out.points) {
    const shrunk = await shrinkHotIndex(sql, opts.indexMinBytes)
    if (shrunk) out.hotIndex = shrunk
  }
  return out
}

async function compactDays(sql: Sql, now: Date, opts: { stopAfter?: number }): Promise<CompactionResult> {
  const out: CompactionResult = { blocks: 0, points: 0 }
  // TimescaleDB compresses its own chunks; its points never leave the hypertable.
  if (await usesTimescale(sql)) return out
  const cutoff = compactionCutoff(now)
  // One index probe per stat (its oldest row), not a scan of the hot table; days holding write blocks by their index.
  const due = await sql<{ id: string; oldest: Date }[]>`
    select id, min(oldest) as oldest from (
      select s.id, o.oldest from stats s
      cross join lateral (select min(ts) as oldest from points p where p.stat_id = s.id) o
      where o.oldest < ${cutoff}
      union all
      select stat_id, min(day) from point_blocks where seq > 0 and day < ${cutoff} group by stat_id
    ) d group by id order by 2`
  for (const stat of due) {
    let next: Date | null = stat.oldest
    while (next && next < cutoff) {
      const day: Date = new Date(Math.floor(next.getTime() / DAY_MS) * DAY_MS)
      const moved = await compactDay(sql, stat.id, day)
      if (moved) [out.blocks, out.points] = [out.blocks + 1, out.points + moved]
      if (opts.stopAfter !== undefined && out.points >= opts.stopAfter) return out
      const after = new Date(day.getTime() + DAY_MS)
      const [r]: Array<{ next: Date | null }> = await sql<{ next: Date | null }[]>`
        select least(
          (select min(ts) from points where stat_id = ${stat.id} and ts >= ${after} and ts < ${cutoff}),
          (select min(day) from point_blocks where stat_id = ${stat.id} and seq > 0 and day >= ${after} and day < ${cutoff})) as next`
      next = r.next
    }
  }
  return out
}
