// Compaction: a stat's points older than the hot window (HOT_WINDOW_MINUTES, an hour by default) move
// from the row-per-point `points` table into that stat's blocks (sql/0027), 133 bytes a point becoming a few.
//
// Complete days: each (stat, day) is one transaction that deletes the day's hot rows, writes them as one block
// and merges the day's blocks into its block (seq 0). The day the hot edge falls in: each pass moves the rows of
// every complete stretch older than the window into one new small block (seq > 0, like a write block, sql/0032;
// block 0 when the day has none yet), one statement for up to 100 stats; the small blocks are merged into the
// day's block once they hold as many points as it does, or are MERGE_AT_BLOCKS, and whatever is left when the
// day completes is merged then: a day ends as one block per stat. A merge appends blocks that follow one another
// in time (point_blocks_append, sql/0040: the day's block is copied, not decoded and encoded again); only a late
// point or a backfill inside the day's span makes it decode and encode the day. A crash at any moment leaves
// either the rows or the block, never both or neither, and the next pass carries on where this one stopped. A
// late backfill lands in `points` like any write, or as a write block when it brings many points of a past day
// at once; the next pass merges it in. Readers see all of them in the meantime (stat_points(), seriesPoints()).
// A pass that moved rows vacuums the hot table, and one that merged vacuums the blocks table: the space they
// left is reused by the next pass's rows and merges instead of growing the files (docs/decisions.md §27).
import { MIN_HOT_WINDOW_MINUTES } from '../config.js'
import type { Db, Sql, TxSql } from '../db.js'
import { usesTimescale } from './storage.js'

const DAY_MS = 86_400_000

/**
 * Past days before this take a batch's many points of one day as a write block rather than rows (the persist
 * worker, sql/0032): today's and yesterday's points arrive as rows, which the compaction packs once they are
 * older than the hot window.
 */
export function compactionCutoff(now: Date): Date {
  return new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - DAY_MS)
}

/**
 * One lock per block, shared with retention's rewrite of a straddling block: two writers of one
 * block would each merge into the version they read and the second would drop the first's points.
 */
export const blockLock = (statId: string, day: Date) => `${statId}|${day.toISOString()}`

/** The hot window when none is given (HOT_WINDOW_MINUTES' default). */
export const DEFAULT_HOT_WINDOW_MINUTES = 60
/**
 * The compaction moves whole stretches of this many seconds (aligned to the epoch, so to days): the hot table
 * holds the window plus less than one stretch and one pass interval, and a small block holds at least a
 * stretch's points (a few hundred bytes of arrays and a row header shared by them), not a pass's. An hour, not
 * ten minutes: a move's statements, its transaction and each stat's encode cost about as much for 60 points of a
 * stat as for 360, so 10-minute stretches cost 13-15 µs of PostgreSQL CPU a point moved against 7.2-7.5 for
 * hours (bench:hotwindow, 40 gauges every 10 s, alternated runs); the hot table then holds one to two hours.
 */
export const STRETCH_SECONDS = 3600
/** A day's small blocks are merged into its block once they are this many, even if they hold fewer points. */
export const MERGE_AT_BLOCKS = 24

/** Rows before this are moved: the window's start, rounded down to a stretch. */
export function hotEdge(now: Date, windowMinutes: number): Date {
  const s = Math.floor((now.getTime() / 1000 - windowMinutes * 60) / STRETCH_SECONDS) * STRETCH_SECONDS
  return new Date(s * 1000)
}

/** How long after a writer looks at the clock its statement may still commit and be seen only by a later pass. */
const MARK_SLACK_MS = 5 * 60_000

/**
 * Whether a write whose oldest point is at `oldest` (seconds) must mark the compaction (markBehindEdge): whether it
 * may be behind the edge of a pass that has already checked (compactionPasses). A pass's edge is at most the
 * shortest window's, and a pass that checked before this write committed did so within MARK_SLACK_MS of now.
 */
export function behindEdge(oldest: number, now = Date.now()): boolean {
  return oldest < hotEdge(new Date(now + MARK_SLACK_MS), MIN_HOT_WINDOW_MINUTES).getTime() / 1000
}

/** The CTE that marks a write behind the hot edge for the next pass (sql/0049), in the write's statement. */
export const markBehindEdge = (sql: Db) => sql`marked as (insert into compaction_marks default values returning 1)`

/**
 * The passes of one process (the compact-points job's). A pass at the hot edge of this process's last complete
 * pass has nothing to move or merge unless a write put rows or blocks behind that edge since, and every such write
 * marks it (behindEdge): so it takes the marks and, finding none, returns, one DELETE instead of duePass's probes.
 * The first pass of a process, and the first after the edge moves, look. A pass that fails after taking the marks
 * leaves their rows to the next edge (within the hour) or to another process's first pass.
 */
export function compactionPasses(): (sql: Sql, now: Date, opts?: CompactionOptions) => Promise<CompactionResult> {
  let checked: number | undefined
  return async (sql, now, opts = {}) => {
    const edge = hotEdge(now, opts.hotWindowMinutes ?? DEFAULT_HOT_WINDOW_MINUTES).getTime()
    const [{ marks }] = await sql<{ marks: number }[]>`
      with taken as (delete from compaction_marks returning 1) select count(*)::int as marks from taken`
    if (edge === checked && marks === 0) return { blocks: 0, points: 0, skipped: true }
    checked = undefined
    const out = await compactPoints(sql, now, opts)
    if (opts.stopAfter === undefined || out.points < opts.stopAfter) checked = edge
    return out
  }
}

export interface CompactionResult {
  blocks: number
  points: number
  /** Days whose blocks were merged into their block 0. */
  merges?: number
  /** Set when the pass rebuilt the hot table's index (see shrinkHotIndex): its bytes before and after. */
  hotIndex?: { before: number; after: number }
  /** Set when the pass gave back the hot table's emptied pages (see shrinkHotHeap): its heap's bytes before and after. */
  hotHeap?: { before: number; after: number }
  /** Set when the pass found nothing could be due without looking (compactionPasses). */
  skipped?: boolean
}

export interface CompactionOptions {
  stopAfter?: number
  indexMinBytes?: number
  hotWindowMinutes?: number
  vacuum?: boolean
}

/** Bytes a (stat_id, ts) entry of the hot table's B-tree takes with its share of the page (bench:storage: 73). */
const INDEX_BYTES_PER_ROW = 73
/** The heap is shrunk when it holds this many times what its live rows need... */
const INDEX_BLOAT_FACTOR = 4
/**
 * ...and the index when it holds this many times what its live rows take when inserted one by one (73 bytes each,
 * about twice a rebuilt index's 40). With an hour's window the index does not stay at that: each series' newest
 * entries go in at the end of its key range, which is not the index's end, so the pages there split in halves, and
 * the emptied ones at the start of each range come back slowly; bench:hotwindow's index stood at 5.9 MB, 5.3 of
 * them free, for 16,600 live rows after a day of passes.
 */
const INDEX_REBUILD_FACTOR = 2
/** An index smaller than this is left as it is: a rebuild would give back less than a few hundred pages. */
export const INDEX_SHRINK_MIN_BYTES = 2 * 1024 * 1024
/**
 * ...and at least this many bytes: below it, the pages the heap would give back are not worth moving its rows
 * (the pass's VACUUM keeps a steady heap at the window's size; this is for a first pass over a long history).
 */
export const INDEX_REBUILD_MIN_BYTES = 16 * 1024 * 1024

/**
 * Gives back the disk of the hot table's index once a pass has emptied much of the table. VACUUM makes an
 * emptied heap's pages free and trims its end, but a B-tree keeps its pages: after a backfill burst or a
 * first compaction of old history, the (stat_id, ts) index stays at the size of its peak (870 MB for 12
 * million points moved to 23 MB of blocks, bench:storage), and in steady state it grows past what its rows need
 * (INDEX_REBUILD_FACTOR): rebuilt then, a few times a day at an hour's window.
 *
 * REINDEX CONCURRENTLY: writes and reads go on while it builds. One at a time per database (a session
 * advisory lock on a reserved connection); one that fails leaves an invalid copy, which is dropped.
 * Live rows are estimated from a 1 % sample of the heap's pages: the statistics collector lags the deletes.
 */
export async function shrinkHotIndex(sql: Sql, minBytes = INDEX_SHRINK_MIN_BYTES): Promise<{ before: number; after: number } | null> {
  const size = async () => Number((await sql<{ n: string }[]>`select pg_relation_size('points_stat_ts_idx')::text as n`)[0].n)
  const before = await size()
  if (before < minBytes) return null
  const [{ rows }] = await sql<{ rows: number }[]>`select (count(*) * 100)::float8 as rows from points tablesample system (1)`
  if (before < INDEX_REBUILD_FACTOR * INDEX_BYTES_PER_ROW * rows) return null
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

/** Rows a page of the hot table holds (a 60-byte row with its line pointer; bench:storage: 132 bytes a row with the index). */
const ROWS_PER_PAGE = 130

/**
 * Gives back the disk of the hot table's heap once a pass has emptied most of it. VACUUM trims only empty pages at
 * the heap's end, and the rows still hot are the newest, written last, so they sit at the end: after the first
 * compaction of a week of rows the heap kept its size (bench:hotwindow: 69 bytes a point on disk where the blocks
 * needed a few). The rows past the pages the live rows need are deleted and inserted again in one statement
 * (atomic for every reader: the same points, old or new copies, never both or neither; a compaction waiting on
 * them finds them gone and moves the copies next pass), which puts them in the space the first VACUUM freed near
 * the start; a second VACUUM then trims the end. One at a time per database, on a reserved connection.
 */
export async function shrinkHotHeap(sql: Sql, minBytes = INDEX_REBUILD_MIN_BYTES): Promise<{ before: number; after: number } | null> {
  const size = async () => Number((await sql<{ n: string }[]>`select pg_relation_size('points')::text as n`)[0].n)
  const before = await size()
  if (before < minBytes) return null
  const [{ rows }] = await sql<{ rows: number }[]>`select (count(*) * 100)::float8 as rows from points tablesample system (1)`
  const keep = Math.ceil((2 * rows) / ROWS_PER_PAGE) + 1
  if (keep * 8192 * INDEX_BLOAT_FACTOR > before) return null
  const conn = await sql.reserve()
  try {
    const [{ got }] = await conn<{ got: boolean }[]>`select pg_try_advisory_lock(27, 2) as got`
    if (!got) return null
    try {
      await conn`set statement_timeout = 0`
      await conn.unsafe('vacuum points')
      await conn.unsafe(`with d as (delete from points where ctid >= '(${keep},0)'::tid returning stat_id, ts, value)
        insert into points (stat_id, ts, value) select stat_id, ts, value from d`)
      await conn.unsafe('vacuum points')
    } finally {
      await conn`reset statement_timeout`.catch(() => {})
      await conn`select pg_advisory_unlock(27, 2)`.catch(() => {})
    }
  } finally {
    conn.release()
  }
  return { before, after: await size() }
}

/**
 * Moves one stat's hot rows of one UTC day (those before `upto` only, on the day the hot edge is in), and the
 * day's other blocks (write blocks, sql/0032, and the compaction's small blocks), into its block 0; returns how
 * many points moved (0: nothing to do). One transaction: the rows become one block (block 0 when the day has
 * none yet), then the day's blocks are merged (mergeDayBlocks).
 */
export async function compactDay(sql: Sql, statId: string, day: Date, upto?: Date): Promise<number> {
  const end = new Date(Math.min(day.getTime() + DAY_MS, upto?.getTime() ?? Infinity))
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(26, hashtext(${blockLock(statId, day)}))`
    // The stat is held FOR KEY SHARE like a persist transaction does: a concurrent delete waits for this
    // commit and then removes the block too; a stat already deleted moves nothing (its rows are going).
    // Rows off whole seconds (none of today's writers make them) stay hot: the block stores seconds.
    const [row] = await tx<{ moved: number; live: boolean }[]>`
      with live as (select id from stats where id = ${statId} for key share),
      moved as (
        delete from points
        where stat_id = ${statId} and ts >= ${day} and ts < ${end}
          and ts = date_trunc('second', ts) and exists (select 1 from live)
        returning ts, value
      ),
      merged as (select array_agg(ts) as ts, array_agg(value) as value from moved),
      saved as (
        insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
        select ${statId}, ${day},
          case when exists (select 1 from point_blocks where stat_id = ${statId} and day = ${day}) then nextval('point_write_seq') else 0 end,
          e.n, e.first_ts, e.last_ts, e.dts, e.scale, e.ivals, e.fvals
        from merged cross join lateral point_block_encode(${day}, merged.ts, merged.value) e
        where merged.ts is not null
        returning 1
      )
      select (select count(*) from moved)::int as moved, exists (select 1 from live) as live, (select count(*) from saved)::int as saved`
    if (!row.live) return 0
    return row.moved + (await mergeDayBlocks(tx, statId, day))
  }) as Promise<number>
}

/**
 * Merges a day's blocks into its block 0 inside the caller's transaction (which holds the block lock); returns how
 * many points the merged small and write blocks held. Blocks that follow one another in time with one scale are
 * appended (point_blocks_append, sql/0040: a sum over the day block's value deltas and a copy of its arrays);
 * otherwise (a late point or a backfill inside the day's span, scales that differ) every block is decoded and the
 * day encoded again, as point_block_encode gives the same block either way.
 */
async function mergeDayBlocks(tx: TxSql, statId: string, day: Date): Promise<number> {
  const [{ merged }] = await tx<{ merged: number | null }[]>`select point_blocks_append(${statId}, ${day}) as merged`
  return merged ?? reencodeDayBlocks(tx, statId, day)
}

/** Decodes every block of the day and encodes them as its block 0; returns how many points its other blocks held. */
async function reencodeDayBlocks(tx: TxSql, statId: string, day: Date): Promise<number> {
  const [row] = await tx<{ merged: number }[]>`
    with small as (
      delete from point_blocks where stat_id = ${statId} and day = ${day} and seq > 0
      returning n, dts, scale, ivals, fvals
    ),
    old as (
      select d.ts, d.value from point_blocks b
      cross join lateral point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d
      where b.stat_id = ${statId} and b.day = ${day} and b.seq = 0
      union all
      select d.ts, d.value from small w cross join lateral point_block_decode(${day}, w.dts, w.scale, w.ivals, w.fvals) d
    ),
    merged as (select array_agg(ts) as ts, array_agg(value) as value from old),
    saved as (
      insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
      select ${statId}, ${day}, 0, e.n, e.first_ts, e.last_ts, e.dts, e.scale, e.ivals, e.fvals
      from merged cross join lateral point_block_encode(${day}, merged.ts, merged.value) e
      where exists (select 1 from small)
      on conflict (stat_id, day, seq) do update set n = excluded.n, first_ts = excluded.first_ts, last_ts = excluded.last_ts,
        dts = excluded.dts, scale = excluded.scale, ivals = excluded.ivals, fvals = excluded.fvals
      returning 1
    )
    select (select coalesce(sum(n), 0) from small)::int as merged, (select count(*) from saved)::int as saved`
  return row.merged
}

/**
 * Moves the hot rows in [day, upto) (inside one UTC day) of each of the stats into a new small block of that day per
 * stat (a seq > 0, as a write block; block 0 when the stat has no block of that day yet); returns how many points and
 * blocks. One statement, one transaction: rows or
 * blocks. Many stats per statement: a stretch is a few dozen points a stat, and a transaction per stat cost more
 * than the moving (bench:hotwindow). The stats' block locks are taken in one order, and the other holders
 * (compactDay, retention) take one at a time, so no two wait on each other.
 */
export async function compactStretch(sql: Sql, statIds: string[], day: Date, upto: Date): Promise<{ points: number; blocks: number }> {
  const keys = statIds.map((id) => blockLock(id, day)).sort()
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(26, hashtext(k)) from unnest(${keys}::text[]) as u(k)`
    const [row] = await tx<{ points: number; blocks: number }[]>`
      with live as (select id from stats where id = any(${statIds}::uuid[]) for key share),
      moved as (
        delete from points
        where stat_id in (select id from live) and ts >= ${day} and ts < ${upto} and ts = date_trunc('second', ts)
        returning stat_id, ts, value
      ),
      merged as (select stat_id, array_agg(ts) as ts, array_agg(value) as value from moved group by stat_id),
      saved as (
        insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
        select m.stat_id, ${day},
          case when exists (select 1 from point_blocks b where b.stat_id = m.stat_id and b.day = ${day}) then nextval('point_write_seq') else 0 end,
          e.n, e.first_ts, e.last_ts, e.dts, e.scale, e.ivals, e.fvals
        from merged m cross join lateral point_block_encode(${day}, m.ts, m.value) e
        returning 1
      )
      select (select count(*) from moved)::int as points, (select count(*) from saved)::int as blocks`
    return row
  }) as Promise<{ points: number; blocks: number }>
}

/** Stats per stretch statement: a few thousand points each at a point every 10 s. */
const STRETCH_STATS = 100

/**
 * One pass: every stat whose oldest hot row is before the day of the hot edge has those days compacted, oldest
 * first; then every stat's rows of that day before the edge move into a small block, and a day's small blocks
 * are merged into its block when due. Idempotent (a day with no hot rows left is skipped) and resumable (each
 * day or stretch commits alone). What is due is found by one statement (duePass): three statements had made the
 * passes with nothing to move 1.5 µs a point of the day (bench:hotwindow); the job skips even that one when
 * nothing can be due (compactionPasses).
 * `stopAfter` bounds a pass's work; the rest waits for the next one. A pass that moved points ends by
 * giving back the hot index's disk where they leave it bloated (shrinkHotIndex; `indexMinBytes` for tests).
 */
export async function compactPoints(sql: Sql, now: Date, opts: CompactionOptions = {}): Promise<CompactionResult> {
  const out: CompactionResult = { blocks: 0, points: 0 }
  // TimescaleDB compresses its own chunks; its points never leave the hypertable.
  if (await usesTimescale(sql)) return out
  const edge = hotEdge(now, opts.hotWindowMinutes ?? DEFAULT_HOT_WINDOW_MINUTES)
  const edgeDay = new Date(Math.floor(edge.getTime() / DAY_MS) * DAY_MS)
  const due = await duePass(sql, edgeDay, edge)
  await compactDays(sql, edgeDay, due.days, out, opts)
  if (opts.stopAfter === undefined || out.points < opts.stopAfter) await compactEdgeDay(sql, edgeDay, edge, due, out, opts)
  if (out.points) {
    const heap = await shrinkHotHeap(sql, opts.indexMinBytes)
    if (heap) out.hotHeap = heap
    const shrunk = await shrinkHotIndex(sql, opts.indexMinBytes ?? INDEX_SHRINK_MIN_BYTES)
    if (shrunk) out.hotIndex = shrunk
  }
  if (opts.vacuum !== false) await vacuumAfter(sql, out)
  return out
}

/**
 * What a pass as of `edge` has to do: the stats with complete days to compact (rows before the edge's day, or
 * small and write blocks of such a day), each with its oldest such day; the stats with rows in [day, edge); and
 * the stats whose small blocks of the edge's day are due for a merge now (MERGE_AT_BLOCKS, or as many points as
 * the day's block). One index probe per stat for its oldest row (the others only for stats whose oldest row is
 * before the edge), the blocks by the partial index of small blocks.
 */
async function duePass(
  sql: Sql,
  day: Date,
  edge: Date,
): Promise<{ days: Array<{ id: string; oldest: Date }>; stretch: string[]; merge: string[] }> {
  const rows = await sql<{ kind: 'day' | 'stretch' | 'merge'; id: string; oldest: Date | null }[]>`
    with hot as (
      select s.id, o.oldest from stats s
      cross join lateral (select min(ts) as oldest from points p where p.stat_id = s.id) o
      where o.oldest < ${edge}
    )
    select 'day' as kind, id, min(oldest) as oldest from (
      select id, oldest from hot where oldest < ${day}
      union all
      select stat_id, min(day) from point_blocks where seq > 0 and day < ${day} group by stat_id
    ) d group by id
    union all
    select 'stretch', h.id, null from hot h
    where exists (select 1 from points p where p.stat_id = h.id and p.ts >= ${day} and p.ts < ${edge})
    union all
    select 'merge', m.id, null from (${mergesDue(sql, day)}) m
    order by 1, 3, 2`
  return {
    days: rows.filter((r) => r.kind === 'day').map((r) => ({ id: r.id, oldest: r.oldest as Date })),
    stretch: rows.filter((r) => r.kind === 'stretch').map((r) => r.id),
    merge: rows.filter((r) => r.kind === 'merge').map((r) => r.id),
  }
}

/** The stats whose small blocks of `day` are due for a merge into its block: MERGE_AT_BLOCKS, or as many points as it holds. */
const mergesDue = (sql: Sql, day: Date) => sql`
  select c.stat_id as id from (select distinct stat_id from point_blocks where seq > 0 and day = ${day}) c
  cross join lateral (
    select count(*) filter (where seq > 0) as small, coalesce(sum(n) filter (where seq > 0), 0) as small_n,
           coalesce(sum(n) filter (where seq = 0), 0) as big_n
    from point_blocks b where b.stat_id = c.stat_id and b.day = ${day}) k
  where k.small >= ${MERGE_AT_BLOCKS} or k.small_n >= k.big_n`

/**
 * What a pass leaves to VACUUM, done at once rather than at autovacuum's pace. The moved rows' space: made free,
 * the next pass's writes fill it instead of the heap's end, so the heap holds the window and a pass's worth of
 * rows (not when shrinkHotHeap ran: it vacuumed). The merged blocks' previous copies (a merge rewrites the day's
 * block, a day's worth of TOAST by its end): made free for the next merge's copy, the blocks table holds about one
 * dead copy of the current day rather than all of them. Skipped for a table another VACUUM holds (autovacuum, a
 * pass of another worker).
 */
export async function vacuumAfter(sql: Sql, pass: CompactionResult): Promise<void> {
  if (pass.points && !pass.hotHeap) await sql.unsafe('vacuum (skip_locked) points')
  if (pass.merges) await sql.unsafe('vacuum (skip_locked) point_blocks')
}

/** Complete days before `cutoff` (the hot edge's day) of the stats due (duePass), each day into its one block. */
async function compactDays(
  sql: Sql,
  cutoff: Date,
  due: Array<{ id: string; oldest: Date }>,
  out: CompactionResult,
  opts: { stopAfter?: number },
): Promise<void> {
  for (const stat of due) {
    let next: Date | null = stat.oldest
    while (next && next < cutoff) {
      const day: Date = new Date(Math.floor(next.getTime() / DAY_MS) * DAY_MS)
      const moved = await compactDay(sql, stat.id, day)
      if (moved) [out.blocks, out.points, out.merges] = [out.blocks + 1, out.points + moved, (out.merges ?? 0) + 1]
      if (opts.stopAfter !== undefined && out.points >= opts.stopAfter) return
      const after = new Date(day.getTime() + DAY_MS)
      const [r]: Array<{ next: Date | null }> = await sql<{ next: Date | null }[]>`
        select least(
          (select min(ts) from points where stat_id = ${stat.id} and ts >= ${after} and ts < ${cutoff}),
          (select min(day) from point_blocks where stat_id = ${stat.id} and seq > 0 and day >= ${after} and day < ${cutoff})) as next`
      next = r.next
    }
  }
}

/**
 * The day the hot edge is in: each stat's rows in [day, edge) become a small block (duePass found those that
 * have any), then the stats whose small blocks now hold at least as many points as the day's block (or are
 * MERGE_AT_BLOCKS) have them merged in. The block so doubles at each merge until the bound takes over: a point is
 * encoded once (its stretch) and its block copied a few times in its day by the appends. The merges due are
 * duePass's when no stretch moved (nothing changed the day's blocks since), else looked up again.
 */
async function compactEdgeDay(
  sql: Sql,
  day: Date,
  edge: Date,
  due: { stretch: string[]; merge: string[] },
  out: CompactionResult,
  opts: { stopAfter?: number },
): Promise<void> {
  for (let i = 0; i < due.stretch.length; i += STRETCH_STATS) {
    const moved = await compactStretch(sql, due.stretch.slice(i, i + STRETCH_STATS), day, edge)
    out.blocks += moved.blocks
    out.points += moved.points
    if (opts.stopAfter !== undefined && out.points >= opts.stopAfter) return
  }
  const merge = due.stretch.length ? (await sql<{ id: string }[]>`${mergesDue(sql, day)}`).map((m) => m.id) : due.merge
  for (let i = 0; i < merge.length; i += STRETCH_STATS) await mergeStats(sql, merge.slice(i, i + STRETCH_STATS), day)
  if (merge.length) out.merges = (out.merges ?? 0) + merge.length
}

/**
 * Merges the day's blocks of each of the stats into its block 0 (mergeDayBlocks), in one transaction: the stats due
 * at a pass are due together (their blocks double alike), and a transaction each cost more than most appends. The
 * stats are held FOR KEY SHARE as in compactDay (a deleted stat's blocks are not written again); the block locks
 * are taken in one order, as compactStretch does.
 */
async function mergeStats(sql: Sql, statIds: string[], day: Date): Promise<void> {
  const keys = statIds.map((id) => blockLock(id, day)).sort()
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(26, hashtext(k)) from unnest(${keys}::text[]) as u(k)`
    const live = await tx<{ id: string }[]>`select id from stats where id = any(${statIds}::uuid[]) order by id for key share`
    const appended = await tx<{ id: string; merged: number | null }[]>`
      select u.id, point_blocks_append(u.id, ${day}) as merged from unnest(${live.map((l) => l.id)}::uuid[]) as u(id)`
    for (const a of appended) if (a.merged === null) await reencodeDayBlocks(tx, a.id, day)
  })
}
