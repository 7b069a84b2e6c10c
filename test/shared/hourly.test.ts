import test from 'ava'
import { randomUUID } from 'node:crypto'
import { HOUR, readHourly } from '../../shared/stats/hourly.js'
import { readBucketsMany } from '../../shared/stats/read.js'
import { applyBatch } from '../../shared/points/repo.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

let app: TestApp
test.before(async () => {
  app = await startTestApp()
})
test.after.always(() => app?.close())

test("readHourly lays out the chart read's hourly buckets, rolled up or still pending; counters zero-filled once begun, gauges null", async (t) => {
  const [acc] = await app.sql<
    { id: string }[]
  >`insert into accounts (email, plan) values (${`${randomUUID()}@example.com`}, 'pro') returning id`
  const [c] = await app.sql<{ id: string }[]>`insert into stats (account_id, name, kind) values (${acc.id}, 'c', 'counter') returning id`
  const [g] = await app.sql<{ id: string }[]>`insert into stats (account_id, name, kind) values (${acc.id}, 'g', 'gauge') returning id`
  const end = Math.floor(Date.now() / 1000 / HOUR) * HOUR
  const start = end - 10 * HOUR
  // Rolled up: hours 2 and 5 (two points in hour 5).
  await applyBatch(app.sql, randomUUID(), [
    [c.id, start + 2 * HOUR + 10, 3, null],
    [c.id, start + 5 * HOUR + 10, 4, null],
    [c.id, start + 5 * HOUR + 20, 6, null],
    [g.id, start + 2 * HOUR + 10, 1.5, null],
    [g.id, start + 5 * HOUR + 10, 2, null],
    [g.id, start + 5 * HOUR + 3000, 4, null],
  ])
  await refreshRollups(app.sql)
  // Pending: hour 8, and a third point in the rolled-up hour 5 (the two sources add up).
  await applyBatch(app.sql, randomUUID(), [
    [c.id, start + 8 * HOUR + 5, 7, null],
    [g.id, start + 8 * HOUR + 5, 9, null],
    [c.id, start + 5 * HOUR + 30, 1, null],
    [g.id, start + 5 * HOUR + 40, 6, null],
  ])
  const stats = [
    { id: c.id, kind: 'counter' as const },
    { id: g.id, kind: 'gauge' as const },
  ]
  const got = await readHourly(app.sql, stats, new Date(start * 1000), new Date(end * 1000 + 1234))
  t.deepEqual(got.get(c.id), { from: start, values: [null, null, 3, 0, 0, 11, 0, 0, 7, 0], counts: [0, 0, 1, 0, 0, 3, 0, 0, 1, 0] })
  t.deepEqual(got.get(g.id), {
    from: start,
    values: [null, null, 1.5, null, null, 4, null, null, 9, null],
    counts: [0, 0, 1, 0, 0, 3, 0, 0, 1, 0],
  })
  // The same numbers as the chart read at one-hour buckets.
  const chart = await readBucketsMany(app.sql, stats, {
    requested: 'custom',
    from: new Date(start * 1000),
    to: new Date(end * 1000),
    bucketSeconds: HOUR,
  })
  for (const s of stats) {
    const series = got.get(s.id)!
    t.deepEqual(
      chart.get(s.id)!.map((b) => [b.t, b.value, b.n]),
      series.values.flatMap((v, i) => (series.counts[i] ? [[start + i * HOUR, v, series.counts[i]]] : [])),
    )
  }
  // A read of many stats is split in two queries: the same series whichever half a stat falls in.
  const many = [stats[0], ...Array.from({ length: 68 }, () => ({ id: randomUUID(), kind: 'gauge' as const })), stats[1]]
  const split = await readHourly(app.sql, many, new Date(start * 1000), new Date(end * 1000))
  t.is(split.size, 70)
  for (const s of stats) t.deepEqual(split.get(s.id), got.get(s.id))
  t.deepEqual(split.get(many[1].id)!.values, new Array(10).fill(null))
  // `since` before the window: a counter is zero from the first slot.
  const since = await readHourly(
    app.sql,
    [{ id: c.id, kind: 'counter', since: new Date((start - HOUR) * 1000) }],
    new Date(start * 1000),
    new Date(end * 1000),
  )
  t.deepEqual(since.get(c.id)!.values.slice(0, 3), [0, 0, 3])
  t.deepEqual((await readHourly(app.sql, [], new Date(start * 1000), new Date(end * 1000))).size, 0)
})
