// Day blobs of five-minute rollups (sql/0050): closed days packed one bytea per stat and day, read by rollupArrays
// in place of their rows. Each read is compared bit for bit with the same read when no blob exists (taken away in a
// transaction rolled back: every day read from rollups_5m's rows), through late writes, retention, a stat's delete
// and builders running at once.
import test, { type ExecutionContext } from 'ava'
import { randomUUID } from 'node:crypto'
import type { Db } from '../../shared/db.js'
import type { QueuedPoint } from '../../shared/jobs.js'
import { deleteStat } from '../../shared/delete-stat.js'
import { type QueryData, rangeQuery } from '../../shared/promql/engine.js'
import { statsSource } from '../../shared/promql/source.js'
import { applyBatch } from '../../shared/points/repo.js'
import { enforceRetention } from '../../shared/points/retention.js'
import { buildRollupDays, foldRollups } from '../../shared/points/rollups.js'
import { DayCache, dayCache } from '../../shared/stats/day-cache.js'
import { type BucketArrays, heldReads, rollupArrays } from '../../shared/stats/hourly.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

const DAY = 86_400
const today = Math.floor(Date.now() / 1000 / DAY) * DAY
// Four closed days and today's first part, a point a minute (13 s past it), through 20 minutes ago.
const first = today - 4 * DAY
const last = Math.floor(Date.now() / 1000 / 60) * 60 - 20 * 60

let app: TestApp
let accountId = ''
const ids: Record<'c' | 'g' | 'gone', string> = { c: '', g: '', gone: '' }

test.before(async () => {
  app = await startTestApp()
  const [acc] = await app.sql<{ id: string }[]>`
    insert into accounts (email, plan) values (${`${randomUUID()}@example.com`}, 'pro') returning id`
  accountId = acc.id
  for (const [name, kind] of [
    ['c', 'counter'],
    ['g', 'gauge'],
    ['gone', 'counter'],
  ] as const) {
    const [s] = await app.sql<{ id: string }[]>`
      insert into stats (account_id, name, kind) values (${accountId}, ${name}, ${kind}) returning id`
    ids[name] = s.id
  }
  const points: QueuedPoint[] = []
  // Values whose sums round in float8: a packed sum that is not the stored one bit for bit shows.
  for (let t = first, i = 0; t <= last; t += 60, i++)
    points.push([ids.c, t + 13, 1 + (i % 7) * 0.1, null], [ids.g, t + 13, Math.sin(i) * 3.3, null], [ids.gone, t + 13, 0.7, null])
  for (let i = 0; i < points.length; i += 5000) await applyBatch(app.sql, randomUUID(), points.slice(i, i + 5000))
  while ((await refreshRollups(app.sql)).rows > 0);
  while ((await buildRollupDays(app.sql)) > 0);
})
test.after.always(() => app?.close())

/**
 * PromQL answers over blobs and over rows: the same series and times, each value within floating error (README). A
 * blob's hour is its five-minute buckets added up here, the hourly rollup's row added up by PostgreSQL: the two may
 * differ in the last place, and a running total carries that on (the buckets themselves are compared bit for bit).
 */
function sameAnswers(t_: ExecutionContext, a: QueryData[], b: QueryData[], what: string) {
  t_.is(a.length, b.length)
  for (let q = 0; q < a.length; q++) {
    const [x, y] = [a[q], b[q]]
    if (x.resultType !== 'matrix' || y.resultType !== 'matrix') {
      t_.fail(`${what}: not a matrix`)
      continue
    }
    t_.deepEqual(
      x.result.map((s) => [s.metric, s.values.map(([at]) => at)]),
      y.result.map((s) => [s.metric, s.values.map(([at]) => at)]),
      `${what}: the series and their times`,
    )
    for (let i = 0; i < x.result.length; i++)
      for (let j = 0; j < x.result[i].values.length; j++) {
        const [at, v] = x.result[i].values[j]
        const w = Number(y.result[i].values[j][1])
        t_.true(Math.abs(Number(v) - w) <= 1e-12 * Math.max(1, Math.abs(w)), `${what}: query ${q} at ${at}: ${v} against ${w}`)
      }
  }
}

/** A read's buckets by slot (the rollup's and the tail's apart), values as they came. */
function bySlot(rows: BucketArrays[]): Record<string, Array<[number, number, number]>> {
  const out: Record<string, Array<[number, number, number]>> = {}
  for (const r of rows) {
    const list: Array<[number, number, number]> = []
    for (let k = 0; k < r.h.length; k++) list.push([r.h[k], r.n[k], r.sum[k]])
    out[r.stat_id] = list.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2])
  }
  return out
}

/** `read` with no day blob (taken away in a transaction rolled back): every day read from its rows. */
async function withoutBlobs<T>(read: (tx: typeof app.sql) => Promise<T>): Promise<T> {
  return app.sql
    .begin(async (tx) => {
      await tx`delete from rollup_days`
      throw Object.assign(new Error('rollback'), { r: await read(tx as unknown as typeof app.sql) })
    })
    .catch((e: { r?: T }) => e.r as T)
}

/** The read with day blobs, and the same buckets from rollups_5m's rows alone (no blob to read). */
async function bothReads(list: string[], f: number, t: number, size: number) {
  const packed = bySlot(await rollupArrays(app.sql, list, f, t, size))
  const rows = bySlot(await withoutBlobs((tx) => rollupArrays(tx, list, f, t, size)))
  return { packed, rows }
}

/** The (stat, day)s with a blob of five-minute (or hourly) rows, and whether each equals its rows packed in bucket order. */
async function blobs(statId: string, size: 300 | 3600 = 300): Promise<Array<{ day: number; equal: boolean }>> {
  const rows = await app.sql<{ day: number; equal: boolean }[]>`
    select extract(epoch from d.day)::float8 as day, d.buckets = (
      select string_agg(timestamptz_send(bucket) || int8send(count) || float8send(sum), ''::bytea order by bucket)
      from ${app.sql(size === 300 ? 'rollups_5m' : 'rollups_1h')} r
      where r.stat_id = d.stat_id and r.bucket >= d.day and r.bucket < d.day + interval '24 hours') as equal
    from rollup_days d where d.stat_id = ${statId} and d.size = ${size} order by d.day`
  return rows.map((r) => ({ day: Number(r.day), equal: r.equal }))
}

// Partial days at both ends (from 3 h into the first day to today's last quarter hour), at 5 and 15 minutes.
const f = first + 3 * 3600
const t = Math.floor(last / 900) * 900

test.serial('closed days get a blob equal to their rows; today has none', async (t_) => {
  for (const [id, size] of [
    [ids.c, 300],
    [ids.g, 300],
    [ids.c, 3600],
    [ids.g, 3600],
  ] as const) {
    const days = await blobs(id, size)
    // The day before yesterday and older are always closed over an hour; yesterday too after 01:00 UTC.
    t_.true(days.length >= 3, `${days.length} blobs`)
    t_.true(days.every((d) => d.equal))
    t_.deepEqual(
      days.map((d) => d.day),
      [first, first + DAY, first + 2 * DAY, first + 3 * DAY].slice(0, days.length),
    )
  }
})

test.serial(
  'a read over blobs equals the read of the rows, bit for bit, counters and gauges, at 5 and 15 minutes, 1 and 2 hours',
  async (t_) => {
    for (const size of [300, 900, 3600, 7200]) {
      const { packed, rows } = await bothReads([ids.c, ids.g], f, t, size)
      t_.deepEqual(packed, rows, `${size} s`)
      t_.true(packed[ids.c].length > 0 && packed[ids.g].length > 0)
    }
    // And that read is rollups_5m's rows as they are (nothing pending here).
    const direct = await app.sql<{ b: number; count: string; sum: number }[]>`
    select extract(epoch from bucket)::float8 as b, count, sum from rollups_5m
    where stat_id = ${ids.g} and bucket >= ${new Date(f * 1000)} and bucket < ${new Date(t * 1000)}`
    t_.deepEqual(
      (await bothReads([ids.g], f, t, 300)).rows[ids.g],
      bySlot([
        {
          stat_id: ids.g,
          h: direct.map((r) => (r.b - f) / 300),
          n: direct.map((r) => Number(r.count)),
          sum: direct.map((r) => r.sum),
        },
      ])[ids.g],
    )
    // The read takes the blobs indeed: one changed under it (in a transaction rolled back) changes its answer.
    const changed = await app.sql
      .begin(async (tx) => {
        await tx`update rollup_days set buckets = substr(buckets, 25), version = default where stat_id = ${ids.c} and day = ${new Date((first + DAY) * 1000)}`
        const r = bySlot(await rollupArrays(tx, [ids.c], f, t, 300))
        throw Object.assign(new Error('rollback'), { r })
      })
      .catch((e: { r?: ReturnType<typeof bySlot> }) => e.r!)
    const { rows } = await bothReads([ids.c], f, t, 300)
    t_.is(changed[ids.c].length, rows[ids.c].length - 1)
  },
)

test.serial("zones (a few buckets of each hour) read over blobs equal the zones' rows", async (t_) => {
  // Ten minutes before each hour through five after, as PromQL's [5m] windows at an hour's step ask (source.ts).
  const zones: Array<[number, number]> = []
  for (let h = f + 3600; h < t; h += 3600) zones.push([h - 600, Math.min(h + 300, t)])
  for (const size of [300, 900]) {
    const packed = bySlot(await rollupArrays(app.sql, [ids.c, ids.g], f, t, size, undefined, zones))
    const rows = bySlot(await withoutBlobs((tx) => rollupArrays(tx, [ids.c, ids.g], f, t, size, undefined, zones)))
    t_.deepEqual(packed, rows, `${size} s`)
    // Only the zones' five-minute rows, 3 an hour (at 15 minutes too: a slot comes once for each of its rows).
    t_.is(packed[ids.c].length, zones.length * 3)
  }
})

test.serial('a day held decoded is not sent again while its version stands; a new version is sent and read', async (t_) => {
  dayCache.clear()
  const before = bySlot(await rollupArrays(app.sql, [ids.c], f, t, 300))
  // The whole days from f: the second and third closed days, and yesterday after 01:00 UTC (packed only then).
  t_.true(dayCache.size >= 2, `${dayCache.size} days held`)
  const day = new Date((first + DAY) * 1000)
  // Each change below is made in a transaction rolled back, and the read made inside it.
  const readWith = (change: (tx: Db) => Promise<unknown>) =>
    app.sql
      .begin(async (tx) => {
        await change(tx)
        throw Object.assign(new Error('rollback'), { r: bySlot(await rollupArrays(tx, [ids.c], f, t, 300)) })
      })
      .catch((e: { r?: ReturnType<typeof bySlot> }) => e.r!)
  // Bytes changed under the same version (which no writer does): the read keeps the held buckets, so it did not
  // take the blob's bytes.
  // Every whole day is held now, so each read checks them all at once (a count and a sum of their versions) and
  // reads again, day by day, only when that check finds a change.
  const counted = () => ({ ...heldReads })
  const was = counted()
  const sameVersion = await readWith(
    (tx) => tx`update rollup_days set buckets = substr(buckets, 25) where stat_id = ${ids.c} and day = ${day}`,
  )
  t_.deepEqual(sameVersion, before)
  t_.deepEqual(counted(), { checked: was.checked + 1, readAgain: was.readAgain }, 'the held days checked at once and kept')
  // A new version is sent, and read.
  const newVersion = await readWith(
    (tx) => tx`update rollup_days set buckets = substr(buckets, 25), version = default where stat_id = ${ids.c} and day = ${day}`,
  )
  t_.is(newVersion[ids.c].length, before[ids.c].length - 1)
  t_.deepEqual(counted(), { checked: was.checked + 2, readAgain: was.readAgain + 1 }, 'a new version: read again')
  // No blob (a late write deleted it): the day's rows are read, not the held buckets.
  const rowsOnly = await readWith(async (tx) => {
    await tx`delete from rollup_days where stat_id = ${ids.c} and day = ${day}`
    await tx`delete from rollups_5m where stat_id = ${ids.c} and bucket = ${day}`
  })
  t_.is(rowsOnly[ids.c].length, before[ids.c].length - 1)
  t_.deepEqual(counted(), { checked: was.checked + 3, readAgain: was.readAgain + 2 }, 'a blob gone: read again')
  // And the held days answer as the rows do.
  t_.deepEqual(before, bySlot(await withoutBlobs((tx) => rollupArrays(tx, [ids.c], f, t, 300))))
})

test('the held days stay within their budget, the least recently used going first', (t_) => {
  const cache = new DayCache(0)
  const day = (m: number) => ({ version: String(m), slots: new Float64Array(2 * m) })
  // A day of 288 slots: their 16 bytes each, half as much again for the running sums made on first use, and 400.
  const entry = 288 * 16 * 1.5 + 400
  cache.put('a', 300, 0, day(288))
  t_.is(cache.size, 0, 'a budget of 0 holds nothing')
  cache.resize(3 * entry)
  for (const d of [0, 1, 2]) cache.put('a', 300, d, day(288))
  t_.is(cache.size, 3)
  t_.truthy(cache.get('a', 300, 0))
  // Past the budget, the least recently used go until a tenth of it is free: day 1, then day 2 (day 0 was read).
  cache.put('a', 300, 3, day(288))
  t_.deepEqual(
    [0, 1, 2, 3].map((d) => Boolean(cache.get('a', 300, d))),
    [true, false, false, true],
  )
  t_.true(cache.usedBytes <= 3 * entry)
  cache.resize(1.5 * entry)
  t_.is(cache.size, 1)
})

test.serial('PromQL over a week of blobs answers as over the rows', async (t_) => {
  const source = statsSource((fn) => fn(app.sql))
  const ask = (q: string, step: number) => rangeQuery(source, accountId, q, f + step, t, step)
  const queries = [
    ['sum(rate(c[5m15s]))', 300],
    ['rate(c[15m])', 900],
    ['avg_over_time(g[5m])', 300],
    // An hour's step: the zones' read.
    ['sum(rate(c[5m]))', 3600],
    ['avg_over_time(g[5m])', 3600],
  ] as const
  const withBlobs = await Promise.all(queries.map(([q, s]) => ask(q, s)))
  const withRows = await withoutBlobs((tx) => {
    const txSource = statsSource((fn) => fn(tx))
    return Promise.all(queries.map(([q, s]) => rangeQuery(txSource, accountId, q, f + s, t, s)))
  })
  sameAnswers(t_, withBlobs, withRows, 'over blobs and over rows')
  t_.true(withBlobs.every((d) => d.resultType === 'matrix' && d.result.length > 0 && d.result[0].values.length > 50))
})

test.serial(
  "PromQL's zones answer as the rows do with late minutes pending in a blob's day and a whole day without its blob",
  async (t_) => {
    // At an hour's step a counter's hours come from the five-minute blobs' slots, and from the hourly rollup only where
    // no blob covers them: a late minute not folded yet is the tail's, and a day without a blob is read as hours.
    // The rates, and the running totals themselves (which a rate would not show shifted).
    const ask = (tx: Db) =>
      Promise.all(
        ['sum(rate(c[5m]))', 'last_over_time(c[5m])'].map((q) =>
          rangeQuery(
            statsSource((fn) => fn(tx)),
            accountId,
            q,
            f + 3600,
            t,
            3600,
          ),
        ),
      )
    // Two minutes before 05:00 on the second day: inside the step at 05:00's window.
    const late = first + DAY + 5 * 3600 - 120
    const [withBlobs, withRows, alone] = await app.sql
      .begin(async (tx) => {
        await tx`insert into rollup_pending (stat_id, bucket, count, sum, min, max)
        values (${ids.c}, ${new Date(late * 1000)}, 1, 100.25, 100.25, 100.25)`
        await tx`delete from rollup_days where stat_id = ${ids.c} and day = ${new Date((first + 2 * DAY) * 1000)}`
        const answers = [await ask(tx)]
        await tx`delete from rollup_days`
        answers.push(await ask(tx))
        throw Object.assign(new Error('rollback'), { r: answers })
      })
      .catch(async (e: { r?: QueryData[][] }) => [...e.r!, await ask(app.sql)])
    sameAnswers(t_, withBlobs, withRows, 'over blobs and over rows')
    t_.true(withBlobs.every((d) => d.result.length === 1))
    // The late minute raises every later running total: only the rate of the step whose window holds it changes.
    const values = (d: QueryData) => (d.result[0] as { values: Array<[number, string]> }).values
    const changed = values(withBlobs[0]).filter(([, v], i) => Math.abs(Number(v) - Number(values(alone[0])[i][1])) > 1e-9)
    t_.deepEqual(
      changed.map(([at]) => at),
      [late + 120],
    )
  },
)

test.serial("a late write drops its day's blob in its own fold; the read has the point; the builder packs the day again", async (t_) => {
  const day = first + DAY
  const before = bySlot(await rollupArrays(app.sql, [ids.c], f, t, 300))
  await applyBatch(app.sql, randomUUID(), [[ids.c, day + 3600 + 31, 100.25, null]])
  // Pending (not folded): the blob stands, the point comes from the tail.
  t_.true((await blobs(ids.c)).some((d) => d.day === day))
  // The fold alone (the refresh would pack the day again straight after).
  await foldRollups(app.sql, 1000, [])
  t_.false(
    (await blobs(ids.c)).some((d) => d.day === day),
    'the fold dropped the blob',
  )
  t_.false(
    (await blobs(ids.c, 3600)).some((d) => d.day === day),
    'and the hours blob',
  )
  const { packed, rows } = await bothReads([ids.c], f, t, 300)
  t_.deepEqual(packed, rows)
  const slot = (day + 3600 - f) / 300
  const at = (r: ReturnType<typeof bySlot>) => r[ids.c].find(([h]) => h === slot)!
  t_.deepEqual([at(packed)[1], at(packed)[2]], [at(before)[1] + 1, at(before)[2] + 100.25])
  // The builder (here run by the refresh) packs it again, with the late point.
  await refreshRollups(app.sql)
  const again = (await blobs(ids.c)).find((d) => d.day === day)
  t_.true(again?.equal)
  t_.true((await blobs(ids.c, 3600)).find((d) => d.day === day)?.equal)
  t_.deepEqual(bySlot(await rollupArrays(app.sql, [ids.c], f, t, 3600)), (await bothReads([ids.c], f, t, 3600)).rows)
  t_.deepEqual(bySlot(await rollupArrays(app.sql, [ids.c], f, t, 300)), packed)
})

test.serial('a day a write holds is skipped by the builder, and packed with the write once it commits', async (t_) => {
  const day = first + 2 * DAY
  const at = new Date((day + 7200) * 1000)
  const reserved = await app.sql.reserve()
  try {
    await reserved`begin`
    // A write of the day (as a fold or an import makes): its trigger locks the day's listed row and drops the blob.
    await reserved`update rollups_5m set sum = sum + 1, count = count + 1 where stat_id = ${ids.c} and bucket = ${at}`
    t_.is(await buildRollupDays(app.sql), 0, 'nothing listed but the held day')
    t_.true(
      (await blobs(ids.c)).some((d) => d.day === day),
      'the old blob stands until the write commits',
    )
    await reserved`commit`
  } finally {
    reserved.release()
  }
  t_.false((await blobs(ids.c)).some((d) => d.day === day))
  t_.is(await buildRollupDays(app.sql), 1)
  t_.true((await blobs(ids.c)).find((d) => d.day === day)?.equal)
  const { packed, rows } = await bothReads([ids.c, ids.g], f, t, 300)
  t_.deepEqual(packed, rows)
})

test.serial('a write that meets a build of its day waits for it, then drops the blob it made', async (t_) => {
  const day = first + DAY
  const D = new Date(day * 1000)
  // The day listed (a late point folded), then packed by a builder that holds its listed row, as buildRollupDays
  // does between its two statements.
  await applyBatch(app.sql, randomUUID(), [[ids.c, day + 600 + 9, 2.5, null]])
  await foldRollups(app.sql, 1000, [])
  t_.is((await app.sql`select 1 from rollup_days_pending where stat_id = ${ids.c} and size = 300 and day = ${D}`).length, 1)
  const builder = await app.sql.reserve()
  let fold: Promise<unknown> | undefined
  try {
    await builder`begin`
    await builder`select 1 from rollup_days_pending where stat_id = ${ids.c} and size = 300 and day = ${D} for update`
    // Meanwhile a late point of that day is folded: its trigger waits on the listed row.
    await applyBatch(app.sql, randomUUID(), [[ids.c, day + 1200 + 9, 4.25, null]])
    let folded = false
    fold = foldRollups(app.sql, 1000, []).then(() => {
      folded = true
    })
    await new Promise((r) => setTimeout(r, 300))
    t_.false(folded, 'the fold waits for the build')
    // The builder packs what its snapshot holds (without the point being folded), and takes the day off the list.
    await builder`insert into rollup_days (stat_id, size, day, buckets)
      select stat_id, 300, ${D}, string_agg(timestamptz_send(bucket) || int8send(count) || float8send(sum), ''::bytea order by bucket)
      from rollups_5m where stat_id = ${ids.c} and bucket >= ${D} and bucket < ${new Date((day + DAY) * 1000)} group by stat_id`
    await builder`delete from rollup_days_pending where stat_id = ${ids.c} and size = 300 and day = ${D}`
    await builder`commit`
  } finally {
    builder.release()
  }
  await fold
  t_.false(
    (await blobs(ids.c)).some((d) => d.day === day),
    "the fold dropped the build's blob",
  )
  t_.is(
    (await app.sql`select 1 from rollup_days_pending where stat_id = ${ids.c} and size = 300 and day = ${D}`).length,
    1,
    'and listed the day',
  )
  const { packed, rows } = await bothReads([ids.c], f, t, 300)
  t_.deepEqual(packed, rows)
  t_.true(
    packed[ids.c].some(([h, n]) => h === (day + 1200 - f) / 300 && n === 6),
    'the folded point is read',
  )
  await buildRollupDays(app.sql)
  t_.true((await blobs(ids.c)).find((d) => d.day === day)?.equal)
})

test.serial('builders at once pack each day once, each blob equal to its rows', async (t_) => {
  await app.sql`delete from rollup_days`
  await app.sql`insert into rollup_days_pending (stat_id, size, day)
    select stat_id, size, bucket from rollups_1d cross join (values (300), (3600)) as s(size) on conflict do nothing`
  for (;;) {
    const done = await Promise.all([1, 2, 3].map(() => buildRollupDays(app.sql, 2)))
    if (done.every((n) => n === 0)) break
  }
  for (const id of [ids.c, ids.g])
    for (const size of [300, 3600] as const) {
      const days = await blobs(id, size)
      t_.true(days.length >= 3)
      t_.true(days.every((d) => d.equal))
    }
  t_.is((await app.sql`select 1 from rollup_days group by stat_id, size, day having count(*) > 1`).length, 0, 'one blob a day')
  for (const size of [900, 3600]) {
    const { packed, rows } = await bothReads([ids.c, ids.g], f, t, size)
    t_.deepEqual(packed, rows)
  }
})

test.serial(
  "retention drops the blobs of the days it cuts into; the builder packs what is left; a stat's delete takes its blobs",
  async (t_) => {
    // The pro plan keeps 400 days: a cutoff 6 hours into the second day.
    const cutoff = first + DAY + 6 * 3600
    await enforceRetention(app.sql, new Date((cutoff + 400 * DAY) * 1000))
    const after = await blobs(ids.c)
    t_.false(after.some((d) => d.day === first || d.day === first + DAY))
    while ((await buildRollupDays(app.sql)) > 0);
    for (const size of [300, 3600] as const) {
      const rebuilt = await blobs(ids.c, size)
      t_.is(rebuilt[0].day, first + DAY, 'the day cut into is packed again, the day wholly gone is not')
      t_.true(rebuilt.every((d) => d.equal))
    }
    const hours = await bothReads([ids.c, ids.g], f, t, 3600)
    t_.deepEqual(hours.packed, hours.rows)
    const { packed, rows } = await bothReads([ids.c, ids.g], f, t, 300)
    t_.deepEqual(packed, rows)
    t_.true(packed[ids.c][0][0] >= (cutoff - f) / 300 - 1)
    // Zones over a blob with gaps (the day cut into): the whole blob comes, its buckets outside the zones left out.
    const zones: Array<[number, number]> = []
    for (let h = f + 3600; h < t; h += 3600) zones.push([h - 600, Math.min(h + 300, t)])
    t_.deepEqual(
      bySlot(await rollupArrays(app.sql, [ids.c], f, t, 300, undefined, zones)),
      bySlot(await withoutBlobs((tx) => rollupArrays(tx, [ids.c], f, t, 300, undefined, zones))),
    )

    t_.true((await blobs(ids.gone)).length > 0)
    await deleteStat(app.sql, accountId, 'gone')
    t_.is((await app.sql`select 1 from rollup_days where stat_id = ${ids.gone}`).length, 0)
    // The delete trigger takes a deleted stat's days off the list (today's too) and lists none again.
    t_.is((await app.sql`select 1 from rollup_days_pending where stat_id = ${ids.gone}`).length, 0, 'the delete took its days off the list')
  },
)
