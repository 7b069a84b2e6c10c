// bench:persist: what storing a point costs PostgreSQL and the worker in the persist
// statement alone (applyBatches, no HTTP, no queue), against a COPY of the same rows into the same
// `points` table (its heap and its (stat_id, ts) index) in the same run: the floor of one row per
// point, which no statement that inserts a row per point gets under.
//
// Two shapes, each its own table of runs:
// - live: the head-to-head's 100-point load (the team's external h2h harness, docs/write-cost.md), BENCH_PERSIST_STATS stats
//   (1,008: 16 accounts x 63) written round-robin at the current time, statements of 16 batches x
//   500 points (a full commit group of the worker). Every point is a row.
// - backfill: the same statements, each batch 500 points of one stat 10 s apart on a day 3 to 20 days
//   back (a client sending history, the drills' backfill burst): stored as write blocks (sql/0032).
// With the backfill shape, what the next compaction then pays per point, from write blocks and from rows.
// CPU is read from /proc for this process and for every PostgreSQL backend of the bench database,
// alternating the two sides BENCH_PERSIST_REPS times (machines here are shared: one pair is not a
// trend). Prints µs of CPU per point for each side and their ratio. BENCH_PERSIST_SHAPES picks the shapes.
import { randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createSql } from '../shared/db.js'
import type { QueuedPoint } from '../shared/jobs.js'
import { applyBatches, type Batch } from '../shared/points/repo.js'
import { createTestDatabase, prepareTemplate } from '../test/helpers/db.js'
import { envInt, logger } from './common.js'
import { compactionCost, measure, type Side } from './compaction-ref.js'

const STATS = envInt('BENCH_PERSIST_STATS', 1008, 1)
const STATEMENTS = envInt('BENCH_PERSIST_STATEMENTS', 60, 1)
const REPS = envInt('BENCH_PERSIST_REPS', 3, 1)
const SHAPES = (process.env.BENCH_PERSIST_SHAPES ?? 'live,backfill').split(',')
const BATCHES = 16
const BATCH = 500
const say = logger('bench:persist')

async function main() {
  await prepareTemplate()
  const db = await createTestDatabase()
  const sql = createSql(db.url, { max: 2 })
  try {
    const [account] = await sql<
      { id: string }[]
    >`insert into accounts (email, plan) values (${`persist-bench-${randomUUID()}@example.com`}, 'business') returning id`
    const statIds = (
      await sql<{ id: string }[]>`
      insert into stats (account_id, name, kind) select ${account.id}, 'persist.' || g, 'counter' from generate_series(1, ${STATS}) g returning id`
    ).map((r) => r.id)
    const DAY = 86_400
    let n = 0
    let t = Math.floor(Date.now() / 1000) - 3600
    let back = 0
    const shapes = {
      live: (): Batch[] => {
        t++
        return Array.from({ length: BATCHES }, () => ({
          id: randomUUID(),
          points: Array.from({ length: BATCH }, (): QueuedPoint => [statIds[n++ % STATS], t, 1, null]),
        }))
      },
      // Batch k of the run's statements: a stat, a day 3 to 20 days back, its k-th stretch of 500 points 10 s apart.
      backfill: (): Batch[] =>
        Array.from({ length: BATCHES }, () => {
          const k = back++
          const day = (Math.floor(Date.now() / 1000 / DAY) - 3 - (k % 18)) * DAY
          const from = day + ((Math.floor(k / 18) * BATCH * 10) % (DAY - BATCH * 10))
          const stat = statIds[k % STATS]
          return {
            id: randomUUID(),
            points: Array.from(
              { length: BATCH },
              (_, i): QueuedPoint => [stat, from + i * 10, Math.round(Math.sin(k + i / 50) * 5000) / 100, null],
            ),
          }
        }),
    }
    const perRun = STATEMENTS * BATCHES * BATCH
    const persist = (shape: () => Batch[]) =>
      measure(sql, perRun, async () => {
        for (let i = 0; i < STATEMENTS; i++) await applyBatches(sql, shape())
      })
    // The same rows, one COPY per statement's worth, into the same table and index.
    const copy = (shape: () => Batch[]) =>
      measure(sql, perRun, async () => {
        for (let i = 0; i < STATEMENTS; i++) {
          let text = ''
          for (const b of shape())
            for (const [stat, at, value] of b.points) text += `${stat}\t${new Date(at * 1000).toISOString()}\t${value}\n`
          await pipeline(Readable.from([text]), await sql`copy points (stat_id, ts, value) from stdin`.writable())
        }
      })
    const f = (x: number) => x.toFixed(2)
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length
    const summary: string[] = []
    for (const [name, shape] of Object.entries(shapes).filter(([k]) => SHAPES.includes(k))) {
      say(
        `${name}: ${STATS} stats, ${STATEMENTS} statements of ${BATCHES} x ${BATCH} points per run, ${REPS} runs of each side, alternating`,
      )
      await persist(shape) // warm-up: plans, caches, the table's first pages
      await copy(shape)
      const rows: Array<{ persist: Side; copy: Side }> = []
      for (let r = 0; r < REPS; r++) rows.push({ persist: await persist(shape), copy: await copy(shape) })
      for (const [i, { persist: p, copy: c }] of rows.entries()) {
        say(
          `${name} run ${i + 1}: persist PostgreSQL ${f(p.pgUsPerPoint)} µs/point, worker ${f(p.nodeUsPerPoint)}, wall ${f(p.wallUsPerPoint)}; COPY PostgreSQL ${f(c.pgUsPerPoint)} µs/row; ratio ${f(p.pgUsPerPoint / c.pgUsPerPoint)}x`,
        )
      }
      const pg = mean(rows.map((r) => r.persist.pgUsPerPoint))
      const cp = mean(rows.map((r) => r.copy.pgUsPerPoint))
      const node = mean(rows.map((r) => r.persist.nodeUsPerPoint))
      summary.push(
        `bench:persist ${name}: PostgreSQL CPU per point, persist statement ${f(pg)} µs against COPY of the same rows ${f(cp)} µs (${f(pg / cp)}x, mean of ${REPS});` +
          ` the worker's CPU per point building and sending the statement ${f(node)} µs`,
      )
    }
    if (SHAPES.includes('backfill')) {
      const c = await compactionCost(sql, account.id)
      say(`compaction: write blocks ${f(c.blocks.pgUsPerPoint)} µs/point, rows ${f(c.rows.pgUsPerPoint)} µs/point (PostgreSQL)`)
      summary.push(
        `bench:persist compaction of ${c.points.toLocaleString('en-US')} backfilled points into day blocks: PostgreSQL CPU per point, from write blocks ${f(c.blocks.pgUsPerPoint)} µs against ` +
          `from rows ${f(c.rows.pgUsPerPoint)} µs (${f(c.blocks.pgUsPerPoint / c.rows.pgUsPerPoint)}x, one run)`,
      )
    }
    process.stdout.write(`\n${summary.join('\n')}\n`)
  } finally {
    await sql.end()
    await db.drop()
  }
}

await main()
