// bench:hotwindow: the live shape of storage with the hot window (docs/decisions.md §27). 40 gauges, a point
// every 10 s for the 7 days up to now (BENCH_HOT_GAUGES, BENCH_HOT_DAYS), stored by the persist statement
// (applyBatches, the worker's) in /ez-shaped batches of 100 time-ordered points, so every point arrives as a row
// as a live writer's would. The days before the last 24 hours are written first and compacted by one pass as of
// 24 hours ago (the history; what a service started on a week of rows does). Then the last 24 hours as they would
// have run: each COMPACTION_INTERVAL_SECONDS (300) of points written, then the compact-points job's pass as of
// its end. Compaction CPU (PostgreSQL backends of the compaction's connections, read from /proc, and this
// process) per point moved in that steady state, merges and vacuums included, against the same run's reference:
// whole days of rows compacted into day blocks at once (bench:persist's rows figure, bench/compaction-ref.ts).
// Prints bytes per point on disk, every point counted (points and point_blocks: heap, free space map,
// visibility map, indexes, TOAST and its index; rollups excluded), with where they go (live, dead, free).
import { createSql, type Sql } from '../shared/db.js'
import type { QueuedPoint } from '../shared/jobs.js'
import { type CompactionResult, compactionPasses, DEFAULT_HOT_WINDOW_MINUTES, vacuumAfter } from '../shared/points/compaction.js'
import { seriesPoints } from '../shared/points/read.js'
import { applyBatches } from '../shared/points/repo.js'
import { createTestDatabase, prepareTemplate } from '../test/helpers/db.js'
import { backendCpuMs, compactionCost } from './compaction-ref.js'

const env = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt)
const GAUGES = env('BENCH_HOT_GAUGES', 40)
const DAYS = env('BENCH_HOT_DAYS', 7)
const WINDOW = env('HOT_WINDOW_MINUTES', DEFAULT_HOT_WINDOW_MINUTES)
const INTERVAL = env('COMPACTION_INTERVAL_SECONDS', 300)
const STEP = 10
const NOW = Math.floor(Date.now() / 1000 / STEP) * STEP
const START = NOW - DAYS * 86_400
const COMPACTION_APP = 'bench-hot-compaction'
const say = (s: string) => console.log(s)
const mb = (n: number) => `${(n / 1048576).toFixed(2)} MB`

/** Where a relation's bytes go: its forks, and (pgstattuple) live tuples, dead tuples and free space in its main fork. */
async function relationParts(sql: Sql, rel: string) {
  const [r] = await sql<{ main: string; fsm: string; vm: string }[]>`
    select pg_relation_size(${rel}::regclass, 'main')::text as main, pg_relation_size(${rel}::regclass, 'fsm')::text as fsm,
           pg_relation_size(${rel}::regclass, 'vm')::text as vm`
  let detail = ''
  try {
    const [t] = await sql<{ live: string; dead: string; free: string; n: string }[]>`
      select tuple_len::text as live, dead_tuple_len::text as dead, free_space::text as free, tuple_count::text as n from pgstattuple(${rel}::regclass)`
    detail = ` (${Number(t.n).toLocaleString('en')} tuples: live ${mb(Number(t.live))}, dead ${mb(Number(t.dead))}, free ${mb(Number(t.free))})`
  } catch {
    /* pgstattuple is an index or not installed */
  }
  return {
    bytes: Number(r.main) + Number(r.fsm) + Number(r.vm),
    line: `main ${mb(Number(r.main))}, fsm ${mb(Number(r.fsm))}, vm ${mb(Number(r.vm))}${detail}`,
  }
}

/** Every relation of a table (heap, indexes, TOAST and its index), each with its bytes; their sum is pg_total_relation_size. */
async function tableBreakdown(sql: Sql, table: string): Promise<{ total: number; lines: string[] }> {
  const rels = await sql<{ name: string; kind: string }[]>`
    select c.oid::regclass::text as name, 'heap' as kind from pg_class c where c.oid = ${table}::regclass
    union all select i.indexrelid::regclass::text, 'index' from pg_index i where i.indrelid = ${table}::regclass
    union all select c.reltoastrelid::regclass::text, 'toast' from pg_class c where c.oid = ${table}::regclass and c.reltoastrelid <> 0
    union all select i.indexrelid::regclass::text, 'toast index' from pg_class c join pg_index i on i.indrelid = c.reltoastrelid
      where c.oid = ${table}::regclass and c.reltoastrelid <> 0`
  let total = 0
  const lines: string[] = []
  for (const r of rels) {
    const p = await relationParts(sql, r.name)
    total += p.bytes
    lines.push(`  ${table} ${r.kind} ${r.name}: ${mb(p.bytes)} = ${p.line}`)
  }
  return { total, lines }
}

async function main() {
  await prepareTemplate()
  const db = await createTestDatabase()
  {
    // Time spent in the block functions (pg_stat_user_functions), for where the compaction's time goes.
    const admin = createSql(db.url, { max: 1 })
    await admin.unsafe(`alter database "${db.name}" set track_functions = 'all'`)
    await admin.end()
  }
  const writer = createSql(db.url, { max: 2, statementTimeoutSeconds: 0, applicationName: 'bench-hot-writer' })
  const sql = createSql(db.url, { max: 2, statementTimeoutSeconds: 0, applicationName: COMPACTION_APP })
  try {
    await sql`create extension if not exists pgstattuple`.catch(() => say('(pgstattuple not available: no live/dead/free split)'))
    const [{ id: account }] = await sql<{ id: string }[]>`insert into accounts (email) values ('bench@example.com') returning id`
    const ids: string[] = []
    for (let s = 0; s < GAUGES; s++) {
      const [{ id }] = await sql<
        { id: string }[]
      >`insert into stats (account_id, name, kind) values (${account}, ${`g${s}`}, 'gauge') returning id`
      ids.push(id)
    }
    // A daily wave plus noise, two decimals: what a host gauge looks like.
    const value = (s: number, t: number) =>
      Math.round((50 + 20 * Math.sin((2 * Math.PI * t) / 86_400 + s) + (((t * 7919 + s * 104_729) % 1000) / 1000) * 3) * 100) / 100
    let total = 0
    let nb = 0
    /** Points in [from, to) of every gauge, time-ordered, in batches of 100, 20 batches a statement (the worker's group commit), written as of `to`. */
    const write = async (from: number, to: number) => {
      let batch: QueuedPoint[] = []
      let group: Array<{ id: string; points: QueuedPoint[] }> = []
      for (let t = from; t < to; t += STEP) {
        for (let s = 0; s < GAUGES; s++) {
          batch.push([ids[s], t, value(s, t), null])
          if (batch.length === 100) {
            group.push({ id: `b${nb++}`, points: batch })
            batch = []
            if (group.length === 20) {
              total += (await applyBatches(writer, group, to * 1000)).stored
              group = []
            }
          }
        }
      }
      if (batch.length) group.push({ id: `b${nb++}`, points: batch })
      if (group.length) total += (await applyBatches(writer, group, to * 1000)).stored
    }
    const t0 = Date.now()
    await write(START, NOW - 86_400)
    say(
      `${GAUGES} gauges, a point every ${STEP} s: the ${DAYS - 1} days before the last 24 h, ${total.toLocaleString('en')} points persisted in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    )
    await sql`vacuum analyze points`
    const bytes = async () =>
      Number(
        (await sql<{ n: string }[]>`select (pg_total_relation_size('points') + pg_total_relation_size('point_blocks'))::text as n`)[0].n,
      )
    say(`rows before any compaction: ${((await bytes()) / total).toFixed(2)} bytes per point`)

    /** A pass as of `at` (the compact-points job's: compactionPasses), with the CPU it cost: the compaction's backends and this process. */
    // Its VACUUM (vacuumAfter, which the pass runs at its end) measured apart: moving rows leaves it to do sooner or
    // later, and the whole-day reference below leaves it to autovacuum, unmeasured.
    const jobPass = compactionPasses()
    const pass = async (at: number): Promise<{ r: CompactionResult; pgMs: number; nodeMs: number; wallMs: number; vacuumMs: number }> => {
      const pg0 = await backendCpuMs(writer, COMPACTION_APP)
      const cpu0 = process.cpuUsage()
      const w0 = performance.now()
      const r = await jobPass(sql, new Date(at * 1000), { hotWindowMinutes: WINDOW, vacuum: false })
      const wallMs = performance.now() - w0
      const cpu = process.cpuUsage(cpu0)
      const pg1 = await backendCpuMs(writer, COMPACTION_APP)
      await vacuumAfter(sql, r)
      const vacuumMs = (await backendCpuMs(writer, COMPACTION_APP)) - pg1
      return { r, pgMs: pg1 - pg0, nodeMs: (cpu.user + cpu.system) / 1000, wallMs, vacuumMs }
    }

    // The history, as of 24 hours ago.
    const first = await pass(NOW - 86_400)
    say(
      `first pass (history): ${first.r.points.toLocaleString('en')} points, PostgreSQL ${((first.pgMs * 1000) / first.r.points).toFixed(2)} µs per point, ` +
        `worker ${((first.nodeMs * 1000) / first.r.points).toFixed(2)}, wall ${(first.wallMs / 1000).toFixed(1)} s` +
        `${first.r.hotHeap ? `; hot heap ${mb(first.r.hotHeap.before)} -> ${mb(first.r.hotHeap.after)}` : ''}` +
        `${first.r.hotIndex ? `; hot index ${mb(first.r.hotIndex.before)} -> ${mb(first.r.hotIndex.after)}` : ''}`,
    )

    // The last 24 hours: each interval's points written, then the pass as of its end.
    let moved = 0
    let pgMs = 0
    let vacMs = 0
    let nodeMs = 0
    let wallMs = 0
    let passes = 0
    let merges = 0
    let peakHeap = 0
    // PostgreSQL CPU by kind of pass: nothing to move (the edge did not pass a stretch), a move, a move with merges.
    const kinds = { idle: { n: 0, ms: 0 }, move: { n: 0, ms: 0 }, merge: { n: 0, ms: 0 } }
    for (let at = NOW - 86_400 + INTERVAL; at <= NOW; at += INTERVAL) {
      await write(at - INTERVAL, at)
      const p = await pass(at)
      moved += p.r.points
      pgMs += p.pgMs
      vacMs += p.vacuumMs
      nodeMs += p.nodeMs
      wallMs += p.wallMs
      merges += p.r.merges ?? 0
      passes++
      const kind = kinds[p.r.merges ? 'merge' : p.r.points ? 'move' : 'idle']
      kind.n++
      kind.ms += p.pgMs
      peakHeap = Math.max(peakHeap, Number((await sql<{ n: string }[]>`select pg_relation_size('points')::text as n`)[0].n))
    }
    const steadyPg = (pgMs * 1000) / moved
    const steadyVac = (vacMs * 1000) / moved
    const steadyNode = (nodeMs * 1000) / moved
    say(
      `${passes} passes every ${INTERVAL} s through the last 24 h, writes between them: ${moved.toLocaleString('en')} points moved, ${merges} stat-day merges; ` +
        `CPU per point moved: PostgreSQL ${steadyPg.toFixed(2)} µs and its VACUUMs ${steadyVac.toFixed(2)} µs, worker ${steadyNode.toFixed(2)} µs ` +
        `(wall ${((wallMs * 1000) / moved).toFixed(2)} µs without the VACUUMs); the hot heap's largest ${mb(peakHeap)}`,
    )
    await Promise.all([sql`select pg_stat_force_next_flush()`, sql`select pg_stat_force_next_flush()`])
    await new Promise((r) => setTimeout(r, 1500))
    await sql`select 1`
    const fns = await sql<{ name: string; calls: string; self: number; total: number }[]>`
      select funcname as name, calls::text as calls, self_time as self, total_time as total from pg_stat_user_functions
      where funcname like 'point_block%' order by total_time desc`
    say(`block functions over every pass (wall ms): ${fns.map((f) => `${f.name} ${f.calls} calls, ${f.total.toFixed(0)} ms`).join('; ')}`)
    say(
      `PostgreSQL CPU per pass: ${Object.entries(kinds)
        .map(([k, v]) => `${k} ${v.n} passes, ${v.n ? (v.ms / v.n).toFixed(1) : '-'} ms each`)
        .join('; ')}`,
    )
    // What moving rows into blocks costs when it is cheapest: whole days at once (bench:persist's rows figure).
    // In a database of its own: its rows would leave this one's hot index at their peak.
    const refDb = await createTestDatabase()
    const refSql = createSql(refDb.url, { max: 2, statementTimeoutSeconds: 0 })
    const ref = await (async () => {
      try {
        const [{ id }] = await refSql<{ id: string }[]>`insert into accounts (email) values ('bench-ref@example.com') returning id`
        return await compactionCost(refSql, id, { sides: ['rows'] })
      } finally {
        await refSql.end({ timeout: 5 })
        await refDb.drop()
      }
    })()
    say(
      `reference, ${ref.points.toLocaleString('en')} points of whole days compacted from rows: PostgreSQL ${ref.rows.pgUsPerPoint.toFixed(2)} µs per point, ` +
        `worker ${ref.rows.nodeUsPerPoint.toFixed(2)}; steady state / reference: PostgreSQL ${(steadyPg / ref.rows.pgUsPerPoint).toFixed(2)}x ` +
        `(${((steadyPg + steadyVac) / ref.rows.pgUsPerPoint).toFixed(2)}x with its VACUUMs), ` +
        `with the worker ${((steadyPg + steadyNode) / (ref.rows.pgUsPerPoint + ref.rows.nodeUsPerPoint)).toFixed(2)}x`,
    )

    await sql`vacuum analyze points`
    await sql`vacuum analyze point_blocks`
    const [k] = await sql<{ hot: number; blocks: number; small: number; today: number; packed: number }[]>`
      select (select count(*) from points)::int as hot, (select count(*) from point_blocks)::int as blocks,
             (select count(*) from point_blocks where seq > 0)::int as small,
             (select count(*) from point_blocks where day = date_trunc('day', to_timestamp(${NOW}) at time zone 'UTC') at time zone 'UTC')::int as today,
             (select coalesce(sum(n), 0) from point_blocks)::int as packed`
    if (k.hot + k.packed !== total) throw new Error(`rows ${k.hot} + blocks ${k.packed} != ${total}`)
    const hot = await tableBreakdown(sql, 'points')
    const blocks = await tableBreakdown(sql, 'point_blocks')
    const liveBytes = await bytes()
    for (const l of [...hot.lines, ...blocks.lines]) say(l)
    say(
      `as of now (window ${WINDOW} min): ${k.hot.toLocaleString('en')} rows hot, ${k.packed.toLocaleString('en')} points in ${k.blocks} blocks ` +
        `(${k.today} of them today's, ${k.small} small); hot table ${mb(hot.total)} (${(hot.total / total).toFixed(2)} bytes a point), ` +
        `blocks ${mb(blocks.total)} (${(blocks.total / total).toFixed(2)}); ${liveBytes.toLocaleString('en')} bytes on disk: ` +
        `RESULT ${(liveBytes / total).toFixed(2)} bytes per point, all ${total.toLocaleString('en')} counted`,
    )
    // Reads of the last 24 hours' raw points of one gauge, as blocks and the hour's rows, against the same points
    // as rows of another stat (where they were before the hot window): the percentile read (stat_points, SQL, as a
    // chart's p95 takes it) and the Node reader (seriesPoints, as the export takes it). Alternating, READS times each.
    const READS = env('BENCH_HOT_READS', 30)
    const [{ id: rowsId }] = await sql<{ id: string }[]>`
      insert into stats (account_id, name, kind) values (${account}, 'rows.reference', 'gauge') returning id`
    const from = new Date((NOW - 86_400) * 1000)
    const to = new Date((NOW + 60) * 1000)
    await sql`insert into points (stat_id, ts, value) select ${rowsId}, ts, value from stat_points(${ids[0]}, ${from}, ${to})`
    await sql`vacuum analyze points`
    const timed = async (f: () => Promise<unknown>) => {
      const t = performance.now()
      await f()
      return performance.now() - t
    }
    const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
    const sqlRead = (id: string) =>
      sql`select percentile_cont(0.95) within group (order by value) as p95, count(*) from stat_points(${id}, ${from}, ${to})`
    const nodeRead = (id: string) => seriesPoints(sql, id, BigInt(from.getTime()) * 1000n, BigInt(to.getTime()) * 1000n)
    const [a, b] = [await sqlRead(ids[0]), await sqlRead(rowsId)]
    if (a[0].count !== b[0].count || a[0].p95 !== b[0].p95) throw new Error('the two stats read differently')
    const times = { sqlBlocks: [] as number[], sqlRows: [] as number[], nodeBlocks: [] as number[], nodeRows: [] as number[] }
    for (let i = 0; i < READS; i++) {
      times.sqlBlocks.push(await timed(() => sqlRead(ids[0])))
      times.sqlRows.push(await timed(() => sqlRead(rowsId)))
      times.nodeBlocks.push(await timed(() => nodeRead(ids[0])))
      times.nodeRows.push(await timed(() => nodeRead(rowsId)))
    }
    say(
      `24 h of one gauge (${Number(a[0].count).toLocaleString('en')} points), p50 of ${READS}: p95 by stat_points ${p50(times.sqlBlocks).toFixed(2)} ms from blocks and the hour's rows ` +
        `against ${p50(times.sqlRows).toFixed(2)} ms from rows (${(p50(times.sqlBlocks) / p50(times.sqlRows)).toFixed(2)}x); seriesPoints ${p50(times.nodeBlocks).toFixed(2)} ms ` +
        `against ${p50(times.nodeRows).toFixed(2)} ms (${(p50(times.nodeBlocks) / p50(times.nodeRows)).toFixed(2)}x)`,
    )

    // The same blocks with lz4 instead of pglz (PostgreSQL's default), for the record of the choice; one session (a temp table).
    const conn = await sql.reserve()
    try {
      await conn`create temp table lz4_blocks (like point_blocks including storage)`
      await conn`alter table lz4_blocks set (toast_tuple_target = 128)`
      for (const c of ['dts', 'ivals', 'fvals']) await conn.unsafe(`alter table lz4_blocks alter column ${c} set compression lz4`)
      // Through text so that the arrays are compressed again rather than copied compressed.
      await conn`insert into lz4_blocks select stat_id, day, n, first_ts, last_ts, dts::text::int4[], scale, ivals::text::int8[], fvals::text::float8[], seq from point_blocks`
      const size = 'sum(pg_column_size(dts) + coalesce(pg_column_size(ivals), 0) + coalesce(pg_column_size(fvals), 0))::text'
      const [lz] = await conn.unsafe<{ lz4: string; pglz: string }[]>(
        `select (select ${size} from lz4_blocks) as lz4, (select ${size} from point_blocks) as pglz`,
      )
      say(
        `the blocks' arrays: pglz ${mb(Number(lz.pglz))} (${(Number(lz.pglz) / k.packed).toFixed(2)} bytes a point), lz4 ${mb(Number(lz.lz4))} (${(Number(lz.lz4) / k.packed).toFixed(2)})`,
      )
    } finally {
      conn.release()
    }
  } finally {
    await writer.end({ timeout: 5 })
    await sql.end({ timeout: 5 })
    await db.drop()
  }
}

await main()
