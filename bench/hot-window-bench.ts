// bench:hotwindow: the live shape of storage with the hot window (docs/decisions.md §27). 40 gauges, a point
// every 10 s for the 7 days up to now (BENCH_HOT_GAUGES, BENCH_HOT_DAYS), stored by the persist statement
// (applyBatches, the worker's) in /ez-shaped batches of 100 time-ordered points, so every point arrives as a row
// as a live writer's would. Then: one compaction pass as of 24 hours ago (the history), and the compact-points
// job's passes every COMPACTION_INTERVAL_SECONDS (300) through the last 24 hours as they would have run, timed:
// the steady state's cost per point moved, merges included. Prints bytes per point on disk (points and
// point_blocks, heap, indexes and TOAST, after VACUUM) and the compaction's time per point.
import { createSql } from '../shared/db.js'
import { compactPoints, DEFAULT_HOT_WINDOW_MINUTES } from '../shared/points/compaction.js'
import { applyBatches } from '../shared/points/repo.js'
import type { QueuedPoint } from '../shared/jobs.js'
import { createTestDatabase, prepareTemplate } from '../test/helpers/db.js'

const env = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt)
const GAUGES = env('BENCH_HOT_GAUGES', 40)
const DAYS = env('BENCH_HOT_DAYS', 7)
const WINDOW = env('HOT_WINDOW_MINUTES', DEFAULT_HOT_WINDOW_MINUTES)
const INTERVAL = env('COMPACTION_INTERVAL_SECONDS', 300)
const STEP = 10
const NOW = Math.floor(Date.now() / 1000 / STEP) * STEP
const START = NOW - DAYS * 86_400
const say = (s: string) => console.log(s)

async function main() {
  await prepareTemplate()
  const db = await createTestDatabase()
  const sql = createSql(db.url, { max: 2, statementTimeoutSeconds: 0 })
  try {
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
    const t0 = Date.now()
    let batch: QueuedPoint[] = []
    let group: Array<{ id: string; points: QueuedPoint[] }> = []
    let total = 0
    let nb = 0
    for (let t = START; t < NOW; t += STEP) {
      for (let s = 0; s < GAUGES; s++) {
        batch.push([ids[s], t, value(s, t), null])
        if (batch.length === 100) {
          group.push({ id: `b${nb++}`, points: batch })
          batch = []
          // The worker's group commit: a few batches per statement.
          if (group.length === 20) {
            total += (await applyBatches(sql, group)).stored
            group = []
          }
        }
      }
    }
    if (batch.length) group.push({ id: `b${nb++}`, points: batch })
    if (group.length) total += (await applyBatches(sql, group)).stored
    say(
      `${GAUGES} gauges, a point every ${STEP} s for ${DAYS} days: ${total.toLocaleString('en')} points persisted in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    )
    await sql`vacuum analyze points`
    const bytes = async () =>
      Number(
        (await sql<{ n: string }[]>`select (pg_total_relation_size('points') + pg_total_relation_size('point_blocks'))::text as n`)[0].n,
      )
    const rowsBytes = await bytes()
    say(`rows before any compaction: ${(rowsBytes / total).toFixed(2)} bytes per point`)

    // The history, as of 24 hours ago.
    const h0 = process.hrtime.bigint()
    const first = await compactPoints(sql, new Date((NOW - 86_400) * 1000), { hotWindowMinutes: WINDOW })
    const firstMs = Number(process.hrtime.bigint() - h0) / 1e6
    say(
      `first pass (history): ${first.points.toLocaleString('en')} points in ${(firstMs / 1000).toFixed(1)} s, ${((firstMs * 1000) / first.points).toFixed(2)} µs per point`,
    )

    // The last 24 hours, pass by pass.
    let moved = 0
    let ms = 0
    let passes = 0
    for (let at = NOW - 86_400 + INTERVAL; at <= NOW; at += INTERVAL) {
      const p0 = process.hrtime.bigint()
      const r = await compactPoints(sql, new Date(at * 1000), { hotWindowMinutes: WINDOW })
      ms += Number(process.hrtime.bigint() - p0) / 1e6
      moved += r.points
      passes++
    }
    say(
      `${passes} passes every ${INTERVAL} s through the last 24 h: ${moved.toLocaleString('en')} points moved in ${(ms / 1000).toFixed(1)} s, ` +
        `${((ms * 1000) / moved).toFixed(2)} µs per point (merges into the day's block included)`,
    )
    await sql`vacuum analyze points`
    await sql`vacuum analyze point_blocks`
    const [k] = await sql<{ hot: number; blocks: number; today: number; packed: number }[]>`
      select (select count(*) from points)::int as hot, (select count(*) from point_blocks)::int as blocks,
             (select count(*) from point_blocks where day = date_trunc('day', to_timestamp(${NOW}) at time zone 'UTC') at time zone 'UTC')::int as today,
             (select coalesce(sum(n), 0) from point_blocks)::int as packed`
    if (k.hot + k.packed !== total) throw new Error(`rows ${k.hot} + blocks ${k.packed} != ${total}`)
    const liveBytes = await bytes()
    const [parts] = await sql<{ heap: string; idx: string; blocks: string }[]>`
      select pg_relation_size('points')::text as heap, pg_indexes_size('points')::text as idx, pg_total_relation_size('point_blocks')::text as blocks`
    say(
      `on disk: hot heap ${Number(parts.heap).toLocaleString('en')}, its indexes ${Number(parts.idx).toLocaleString('en')}, ` +
        `blocks ${Number(parts.blocks).toLocaleString('en')} bytes (with TOAST and index)`,
    )
    say(
      `as of now (window ${WINDOW} min): ${k.hot.toLocaleString('en')} rows hot, ${k.packed.toLocaleString('en')} points in ${k.blocks} blocks ` +
        `(${k.today} of them today's); ${liveBytes.toLocaleString('en')} bytes on disk: ${(liveBytes / total).toFixed(2)} bytes per point`,
    )
  } finally {
    await sql.end({ timeout: 5 })
    await db.drop()
  }
}

await main()
