import test from 'ava'
import { randomUUID } from 'node:crypto'
import { applyBatch } from '../../shared/points/repo.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { deleteStat } from '../../shared/delete-stat.js'
import { createSql } from '../../shared/db.js'
import type { QueuedPoint } from '../../shared/jobs.js'
import { appSuite } from '../helpers/suite.js'
import { rollupsBesidePoints } from '../helpers/storage.js'
import { signUp } from '../helpers/factories.js'

const app = appSuite()

async function newStat(kind: 'counter' | 'gauge' = 'counter'): Promise<string> {
  const user = await signUp(app.url)
  const [row] = await app.sql<
    { id: string }[]
  >`insert into stats (account_id, name, kind) values (${user.accountId}, ${`s${randomUUID().slice(0, 8)}`}, ${kind}) returning id`
  return row.id
}

// Through stat_points: points of past days arriving many at once are stored as a write block (sql/0032), not rows.
const count = async (statId: string) =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from stat_points(${statId}, '-infinity', 'infinity')`)[0].n

test('decision 3: a batch applied twice (a job run twice) stores its points once', async (t) => {
  const stat = await newStat()
  const batch = randomUUID()
  const points: QueuedPoint[] = [
    [stat, 1_700_000_000, 1, null],
    [stat, 1_700_000_000, 2, null],
    [stat, 1_700_000_060, 3, null],
  ]
  const first = await applyBatch(app.sql, batch, points)
  const again = await applyBatch(app.sql, batch, points)
  t.deepEqual(first, { applied: true, stored: 3, duplicates: 0 })
  t.deepEqual(again, { applied: false, stored: 0, duplicates: 0 })
  t.is(await count(stat), 3)
})

test('decision 3: the same batch applied concurrently by two workers stores once', async (t) => {
  const stat = await newStat()
  const batch = randomUUID()
  const points: QueuedPoint[] = Array.from({ length: 200 }, (_, i) => [stat, 1_700_000_000 + i, i, null])
  const results = await Promise.allSettled([applyBatch(app.sql, batch, points), applyBatch(app.sql, batch, points)])
  t.is(results.filter((r) => r.status === 'fulfilled' && r.value.applied).length, 1)
  t.is(await count(stat), 200)
})

test('2.2 rule 5: points with the same stat and timestamp are all kept', async (t) => {
  const stat = await newStat()
  await applyBatch(app.sql, randomUUID(), [
    [stat, 1_700_000_000, 5, null],
    [stat, 1_700_000_000, 5, null],
  ])
  await applyBatch(app.sql, randomUUID(), [[stat, 1_700_000_000, 5, null]])
  t.is(await count(stat), 3)
})

test('decision 4: the durable ikey record keeps a duplicate out even when the API did not catch it (first write wins)', async (t) => {
  const stat = await newStat('gauge')
  await applyBatch(app.sql, randomUUID(), [[stat, 1_700_000_000, 10, 'k1']])
  const second = await applyBatch(app.sql, randomUUID(), [
    [stat, 1_700_000_000, 99, 'k1'],
    [stat, 1_700_000_001, 7, 'k1'],
  ])
  t.is(second.duplicates, 1)
  const rows = await app.sql<{ value: number }[]>`select value from points where stat_id = ${stat} order by ts`
  t.deepEqual(
    rows.map((r) => r.value),
    [10, 7],
  )
  // Within one batch, too.
  const third = await applyBatch(app.sql, randomUUID(), [
    [stat, 1_700_000_500, 1, 'k2'],
    [stat, 1_700_000_500, 2, 'k2'],
  ])
  t.deepEqual(third, { applied: true, stored: 1, duplicates: 1 })
})

test('decision 5: points queued for a stat deleted since die with it', async (t) => {
  const stat = await newStat()
  await app.sql`delete from stats where id = ${stat}`
  const r = await applyBatch(app.sql, randomUUID(), [
    [stat, 1_700_000_000, 1, null],
    [stat, 1_700_000_000, 1, 'k'],
  ])
  t.is(r.stored, 0)
  t.is(await count(stat), 0)
})

// Serial: a refresh claims every stat's pending rows, so one running in another test of this file could
// hold this test's rows (SKIP LOCKED) and commit them only after this test has read the rollups.
test.serial('rollups: a refresh folds pending minutes into 1m, 5m, 1h and 1d buckets equal to the raw aggregation', async (t) => {
  const stat = await newStat('gauge')
  const base = 1_700_000_000 - (1_700_000_000 % 86_400) // a UTC midnight
  const values: QueuedPoint[] = []
  for (let i = 0; i < 300; i++) values.push([stat, base + i * 397, (i % 17) - 3.5, null])
  // In several batches, refreshed in between, so buckets are merged across refreshes.
  await applyBatch(app.sql, randomUUID(), values.slice(0, 120))
  await refreshRollups(app.sql)
  await applyBatch(app.sql, randomUUID(), values.slice(120))
  await refreshRollups(app.sql)
  for (const { table, rolled, raw } of await rollupsBesidePoints(app.sql, stat)) t.deepEqual(rolled, raw, table)
  const [pending] = await app.sql`select count(*)::int as n from rollup_pending where stat_id = ${stat}`
  t.is(pending.n, 0)
  const [state] = await app.sql`select refreshed_at from rollup_state where stat_id = ${stat}`
  t.truthy(state.refreshed_at, 'refresh time recorded per stat')
})

test.serial('rollups: a minute folded again by a later refresh is added once more to its 5-minute bucket, not twice', async (t) => {
  const stat = await newStat('gauge')
  const base = 1_700_000_100 // a 5-minute boundary
  // Minutes 0 and 1 of the bucket, then more of minute 1 (a merged minute row) and minute 3 (a new one).
  await applyBatch(app.sql, randomUUID(), [
    [stat, base + 5, 2.5, null],
    [stat, base + 65, -1, null],
  ])
  await refreshRollups(app.sql)
  await applyBatch(app.sql, randomUUID(), [
    [stat, base + 70, 8, null],
    [stat, base + 190, -4.5, null],
  ])
  await refreshRollups(app.sql)
  for (const { table, rolled, raw } of await rollupsBesidePoints(app.sql, stat)) t.deepEqual(rolled, raw, table)
  const [five] = await app.sql`select count::int, sum, min, max from rollups_5m where stat_id = ${stat}`
  t.deepEqual({ ...five }, { count: 4, sum: 5, min: -4.5, max: 8 })
})

test.serial('rollups: two refreshers running at once fold every pending row exactly once', async (t) => {
  const stat = await newStat()
  for (let b = 0; b < 20; b++) {
    await applyBatch(
      app.sql,
      randomUUID(),
      Array.from({ length: 50 }, (_, i): QueuedPoint => [stat, 1_700_000_000 + b * 3600 + i * 60, 1, null]),
    )
  }
  await Promise.all([refreshRollups(app.sql, 300), refreshRollups(app.sql, 300), refreshRollups(app.sql, 300)])
  while ((await refreshRollups(app.sql)).rows > 0) {
    /* drain what is left */
  }
  for (const table of ['rollups_1m', 'rollups_5m']) {
    const [r] = await app.sql`select sum(count)::int as n, sum(sum) as s from ${app.sql(table)} where stat_id = ${stat}`
    t.is(r.n, 1000, table)
    t.is(r.s, 1000, table)
  }
})

test.serial(
  'rollups: a stat deleted while a refresh folds its pending rows: both succeed (no deadlock), nothing of the stat is left',
  async (t) => {
    // The interleaving that deadlocked: a refresh claims X's pending rows, then (at the end of its statement) checks
    // the rollups' foreign key on X, while a delete of X holds X and waits for those pending rows. A lock held on one
    // of Y's rollup rows pauses the refresh in between, so the delete of X arrives exactly there.
    const user = await signUp(app.url)
    const sql = createSql(app.config.databaseUrl, { max: 4 })
    t.teardown(() => sql.end({ timeout: 1 }))
    const ids: Record<string, string> = {}
    for (const name of ['x', 'y']) {
      ;[{ id: ids[name] }] = await sql<
        { id: string }[]
      >`insert into stats (account_id, name, kind) values (${user.accountId}, ${name}, 'counter') returning id`
    }
    const minutes = (stat: string): QueuedPoint[] => Array.from({ length: 50 }, (_, i) => [stat, 1_700_000_000 + i * 60, 1, null])
    await applyBatch(sql, randomUUID(), minutes(ids.y))
    while ((await refreshRollups(sql)).rows > 0) {
      /* Y has rollup rows now */
    }
    await applyBatch(sql, randomUUID(), minutes(ids.y))
    await applyBatch(sql, randomUUID(), minutes(ids.x))

    /** Waits until n sessions of this database wait on a lock. */
    const waiting = async (n: number) => {
      for (let i = 0; i < 300; i++) {
        const [{ w }] = await sql<
          { w: number }[]
        >`select count(*)::int as w from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`
        if (w >= n) return
        await new Promise((r) => setTimeout(r, 10))
      }
      throw new Error(`fewer than ${n} sessions ever waited on a lock`)
    }
    let release!: () => void
    const released = new Promise<void>((r) => {
      release = r
    })
    const holder = sql.begin(async (tx) => {
      await tx`select 1 from rollups_1m where stat_id = ${ids.y} for update`
      await released
    })
    await new Promise((r) => setTimeout(r, 50))
    const refresh = refreshRollups(sql)
    await waiting(1)
    const deleted = deleteStat(sql, user.accountId, 'x')
    await waiting(2)
    release()
    const [r, d] = await Promise.allSettled([refresh, deleted, holder])
    t.deepEqual(
      [r.status, d.status],
      ['fulfilled', 'fulfilled'],
      String((r as PromiseRejectedResult).reason ?? (d as PromiseRejectedResult).reason),
    )
    while ((await refreshRollups(sql)).rows > 0) {
      /* fold what the first refresh left */
    }
    for (const table of ['rollup_pending', 'rollups_1m', 'rollups_1h', 'rollups_1d', 'points']) {
      const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table)} where stat_id = ${ids.x}`
      t.is(n, 0, table)
    }
    const [{ n }] = await sql<{ n: number }[]>`select sum(count)::int as n from rollups_1m where stat_id = ${ids.y}`
    t.is(n, 100)
  },
)
