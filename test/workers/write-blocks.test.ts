// A persist job holding many points of one stat for one day past the hot days
// writes them as one block (sql/0032), and every reader of raw points sees them as before. Exactly
// once holds: a group with an applied batch, two workers at once, a stat deleted first. Real
// PostgreSQL, Redis and HTTP server.
import test from 'ava'
import { randomUUID } from 'node:crypto'
import type { QueuedPoint } from '../../shared/jobs.js'
import { compactPoints } from '../../shared/points/compaction.js'
import { applyBatch, applyBatches, MIN_WRITE_BLOCK_POINTS } from '../../shared/points/repo.js'
import { enforceRetention } from '../../shared/points/retention.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { listStats } from '../../shared/stats/repo.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { rollupsBesidePoints } from '../helpers/storage.js'

const app = appSuite()

const DAY = 86_400
const NOW = Math.floor(Date.now() / 1000)
const dayOf = (t: number) => Math.floor(t / DAY) * DAY

async function newStat(kind: 'counter' | 'gauge' = 'gauge') {
  const user = await signUp(app.url)
  const name = `s${randomUUID().slice(0, 8)}`
  const [row] = await app.sql<
    { id: string }[]
  >`insert into stats (account_id, name, kind) values (${user.accountId}, ${name}, ${kind}) returning id`
  return { id: row.id, name, user }
}

/** `count` points of a stat from `from`, `step` seconds apart: two-decimal values. */
const run = (stat: string, from: number, count: number, step: number, seed = 1): QueuedPoint[] =>
  Array.from({ length: count }, (_, i) => [stat, from + i * step, Math.round((50 + 30 * Math.sin(i / 9 + seed)) * 100) / 100, null])

async function where(stat: string) {
  const [r] = await app.sql<{ rows: number; writes: number; written: number }[]>`
    select (select count(*) from points where stat_id = ${stat})::int as rows,
           (select count(*) from point_blocks where stat_id = ${stat} and seq > 0)::int as writes,
           (select coalesce(sum(n), 0) from point_blocks where stat_id = ${stat} and seq > 0)::int as written`
  return r
}
async function stored(stat: string): Promise<Array<[number, number]>> {
  const rows = await app.sql<{ t: number; value: number }[]>`
    select extract(epoch from ts)::int as t, value from stat_points(${stat}, '-infinity', 'infinity') order by ts, value`
  return rows.map((r) => [r.t, r.value])
}
const expected = (...runs: QueuedPoint[][]) =>
  runs
    .flat()
    .map((p): [number, number] => [p[1], p[2]])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])

// Serial where a refresh runs: it claims every stat's pending rows, another test's too (SKIP LOCKED), and could
// hold them while that test reads its rollups.
test.serial(
  'a batch of many points of past days is stored as one block per day, read exactly, its rollups those of the points',
  async (t) => {
    const { id } = await newStat()
    const day = dayOf(NOW) - 6 * DAY
    // Two days of a point a minute, in time order within each day but the second day first, plus a few raw doubles.
    const points = [...run(id, day + DAY + 30, 300, 60, 2), ...run(id, day + 30, 300, 60, 1)]
    points[7][2] = 1 / 3
    const r = await applyBatch(app.sql, randomUUID(), points)
    t.deepEqual(r, { applied: true, stored: 600, duplicates: 0 })
    t.deepEqual(await where(id), { rows: 0, writes: 2, written: 600 })
    t.deepEqual(await stored(id), expected(points))

    await refreshRollups(app.sql)
    // Sums of many doubles are exact up to the order they are added in, which may differ between the two.
    for (const { table, rolled, raw } of await rollupsBesidePoints(app.sql, id, 12)) {
      t.true(rolled.length > 0)
      t.deepEqual(rolled, raw, table)
    }
  },
)

test('points of the hot days stay rows, and so do fewer than the minimum of a past day', async (t) => {
  const { id } = await newStat()
  // Both within the last 24 hours, so still hot if UTC midnight passes while the test runs.
  const today = run(id, NOW - 3000, 40, 60)
  const yesterday = run(id, NOW - 23 * 3600, 40, 60)
  const few = run(id, dayOf(NOW) - 5 * DAY + 100, MIN_WRITE_BLOCK_POINTS - 1, 60)
  await applyBatch(app.sql, randomUUID(), [...today, ...yesterday, ...few])
  t.deepEqual(await where(id), { rows: 40 + 40 + MIN_WRITE_BLOCK_POINTS - 1, writes: 0, written: 0 })
  t.deepEqual(await stored(id), expected(today, yesterday, few))
})

test.serial(
  'a group holding a batch already applied stores only the fresh batch, in a block of its own; a re-run of the group stores nothing',
  async (t) => {
    const { id } = await newStat()
    const day = dayOf(NOW) - 4 * DAY
    // Two batches with points of the same stat and day: a block holds one batch's points, so each is stored exactly when its batch is.
    const a = { id: randomUUID(), points: run(id, day + 10, 50, 60, 1) }
    const b = { id: randomUUID(), points: run(id, day + 20, 50, 60, 2) }
    await applyBatches(app.sql, [a])
    t.deepEqual(await where(id), { rows: 0, writes: 1, written: 50 })
    const r = await applyBatches(app.sql, [a, b])
    t.deepEqual(r, { applied: [b.id], stored: 50, duplicates: 0 })
    t.deepEqual(await where(id), { rows: 0, writes: 2, written: 100 })
    t.deepEqual(await applyBatches(app.sql, [b, a]), { applied: [], stored: 0, duplicates: 0 })
    t.deepEqual(await stored(id), expected(a.points, b.points))
    // The minute aggregates of both batches, once each: a refresh folds them into what the points themselves give.
    await refreshRollups(app.sql)
    const [m] = await app.sql<{ rolled: number; raw: number }[]>`
    select (select sum(count)::int from rollups_1m where stat_id = ${id}) as rolled, (select count(*)::int from stat_points(${id}, '-infinity', 'infinity')) as raw`
    t.deepEqual(m, { rolled: 100, raw: 100 })
  },
)

test('the same group applied by two workers at once stores every point once', async (t) => {
  const { id } = await newStat()
  const day = dayOf(NOW) - 3 * DAY
  const group = [0, 1, 2].map((k) => ({ id: randomUUID(), points: run(id, day + k, 200, 30, k) }))
  const results = await Promise.allSettled([applyBatches(app.sql, group), applyBatches(app.sql, [...group].reverse())])
  const applied = results.flatMap((x) => (x.status === 'fulfilled' ? x.value.applied : []))
  t.deepEqual(applied.sort(), group.map((g) => g.id).sort())
  t.deepEqual(await stored(id), expected(...group.map((g) => g.points)))
})

test('points queued for a stat deleted since leave no block', async (t) => {
  const { id } = await newStat()
  await app.sql`delete from stats where id = ${id}`
  const r = await applyBatch(app.sql, randomUUID(), run(id, dayOf(NOW) - 3 * DAY, 100, 60))
  t.deepEqual(r, { applied: true, stored: 0, duplicates: 0 })
  t.deepEqual(await where(id), { rows: 0, writes: 0, written: 0 })
})

// Serial, as the retention test: a compaction pass or a retention run takes every stat of the database, other tests' too.
test.serial(
  'several blocks of a day and its rows: the newest point, the stat list, the export in time order, then one block after compaction',
  async (t) => {
    const { id, name, user } = await newStat()
    const { key } = await createKey(app.url, user)
    const day = dayOf(NOW) - 5 * DAY
    // Interleaved times: two write blocks and a few rows (fewer than the minimum) of one day, and a block of an earlier day.
    const first = run(id, day + 100, 50, 60, 1)
    const second = run(id, day + 130, 50, 60, 2)
    const rows = run(id, day + 145, 5, 600, 3)
    const earlier = run(id, day - DAY + 100, 20, 60, 4)
    await applyBatch(app.sql, randomUUID(), [...first, ...earlier])
    await applyBatch(app.sql, randomUUID(), second)
    await applyBatch(app.sql, randomUUID(), rows)
    t.deepEqual(await where(id), { rows: 5, writes: 3, written: 120 })

    const newest = Math.max(...[...first, ...second, ...rows].map((p) => p[1]))
    const [n] = await app.sql<{ all: number; before: number }[]>`
    select extract(epoch from stat_newest(${id}, '-infinity', 'infinity'))::int as all,
           extract(epoch from stat_newest(${id}, '-infinity', to_timestamp(${second[49][1]})))::int as before`
    // Before the second block's last point: the first block's last (day + 100 + 49 min) is older than the second's 48th.
    t.deepEqual(n, {
      all: newest,
      before: Math.max(
        second[48][1],
        first.filter((p) => p[1] < second[49][1]).at(-1)![1],
        rows.filter((p) => p[1] < second[49][1]).at(-1)![1],
      ),
    })
    const listed = (await listStats(app.sql, user.accountId)).find((s) => s.name === name)!
    t.is(listed.lastPointAt?.getTime(), newest * 1000)

    const exportedTimes = async () => {
      const res = await request(app.url, '/api/v1/export', { bearer: key })
      t.is(res.status, 200, res.text)
      return (res.body.stats[0].points as Array<{ t: number; value: number }>).map((p): [number, number] => [p.t, p.value])
    }
    const before = await exportedTimes()
    t.deepEqual(
      [...before].sort((a, b) => a[0] - b[0] || a[1] - b[1]),
      expected(first, second, rows, earlier),
    )
    t.true(
      before.every((p, i) => i === 0 || before[i - 1][0] <= p[0]),
      'the export is in time order across blocks and rows',
    )

    const pass = await compactPoints(app.sql, new Date())
    t.true(pass.points >= 125, 'the pass takes every stat of the database, this one among them')
    t.deepEqual(await where(id), { rows: 0, writes: 0, written: 0 })
    const [blocks] = await app.sql<
      { n: number; points: number }[]
    >`select count(*)::int as n, sum(n)::int as points from point_blocks where stat_id = ${id} and seq = 0`
    t.deepEqual(blocks, { n: 2, points: 125 })
    t.deepEqual(await exportedTimes(), before)
  },
)

test.serial('retention removes write blocks past the cutoff whole and rewrites each one straddling it', async (t) => {
  const { id, user } = await newStat()
  await app.sql`update accounts set plan = 'free' where id = ${user.accountId}`
  // A free account keeps 30 days; the run at midday makes the straddling day hold 12 expired hours.
  const now = new Date((dayOf(NOW) + 12 * 3600) * 1000)
  const cutoff = dayOf(NOW) + 12 * 3600 - 30 * DAY
  const gone = run(id, dayOf(cutoff) - 2 * DAY, 100, 600, 1)
  const straddling = [run(id, dayOf(cutoff) + 7, 144, 600, 2), run(id, dayOf(cutoff) + 11, 144, 600, 3)]
  for (const points of [gone, ...straddling]) await applyBatch(app.sql, randomUUID(), points)
  t.deepEqual(await where(id), { rows: 0, writes: 3, written: 388 })
  await enforceRetention(app.sql, now)
  const kept = straddling.flat().filter((p) => p[1] >= cutoff)
  t.deepEqual(await where(id), { rows: 0, writes: 2, written: kept.length })
  t.deepEqual(await stored(id), expected(kept))
})
