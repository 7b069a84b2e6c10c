// Points older than the hot window live in per-stat blocks. Every read of raw points sees hot
// rows and blocks as one set; compaction is crash-safe and resumable; deletes, ikey retries,
// backfills and retention work across both. Real PostgreSQL, Redis and HTTP server.
import test from 'ava'
import { createSql } from '../../shared/db.js'
import { createRedis, redisKey } from '../../shared/redis.js'
import { blockLock, compactPoints, compactionCutoff } from '../../shared/points/compaction.js'
import { decodeBlock, type BlockColumns } from '../../shared/points/blocks.js'
import { enforceRetention } from '../../shared/points/retention.js'
import { listStats } from '../../shared/stats/repo.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

/** A chart's buckets with every number to 12 significant digits (sums of the same floats in another order). */
const roundedBuckets = (buckets: Record<string, unknown>[]) =>
  buckets.map((b) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toPrecision(12)) : v])))

const app = appSuite({ workers: true })

const DAY = 86_400
const NOW = Math.floor(Date.now() / 1000)
const dayOf = (t: number) => Math.floor(t / DAY) * DAY
const iso = (t: number) => new Date(t * 1000).toISOString()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Two-decimal gauge values, raw doubles now and then (a block that cannot be scaled keeps float8). */
function series(from: number, count: number, step: number, seed: number): Array<{ t: number; value: number }> {
  return Array.from({ length: count }, (_, i) => ({
    t: from + i * step,
    value:
      seed % 3 === 0 && i % 7 === 3 ? (i + 1) / 3 : Math.round((50 + 20 * Math.sin(i / 30 + seed) + ((i * 7919) % 13) / 10) * 100) / 100,
  }))
}

async function account() {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  return { user, key }
}

async function write(key: string, stat: string, points: Array<{ t: number; value: number; ikey?: string }>) {
  for (let i = 0; i < points.length; i += 100) {
    const res = await request(app.url, '/ez', { json: { ezkey: key, data: points.slice(i, i + 100).map((p) => ({ stat, ...p })) } })
    if (res.status !== 202 && res.status !== 200) throw new Error(`${res.status} ${res.text}`)
  }
  await settle(app)
}

/** The stat's points as the export gives them, sorted the same way as `expected`. */
async function exported(key: string, stat: string): Promise<Array<{ t: number; value: number }>> {
  const res = await request(app.url, '/api/v1/export', { bearer: key })
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`)
  const s = (res.body.stats as Array<{ name: string; points: Array<{ t: number; value: number }> }>).find((x) => x.name === stat)
  return sorted(s?.points ?? [])
}
const sorted = (ps: Array<{ t: number; value: number }>) =>
  ps.map(({ t, value }) => ({ t, value })).sort((a, b) => a.t - b.t || a.value - b.value)

async function statId(accountId: string, name: string) {
  return (await listStats(app.sql, accountId)).find((s) => s.name === name)!.id
}
/**
 * Where a stat's points are: hot rows, day blocks (seq 0) and the points in them, and points in write blocks
 * not merged into their day's block yet (a backfill of many points of a day arrives as one, sql/0032).
 */
async function counts(id: string) {
  const [r] = await app.sql<{ hot: number; blocks: number; packed: number; writes: number }[]>`
    select (select count(*) from points where stat_id = ${id})::int as hot,
           (select count(*) from point_blocks where stat_id = ${id} and seq = 0)::int as blocks,
           (select coalesce(sum(n), 0) from point_blocks where stat_id = ${id} and seq = 0)::int as packed,
           (select coalesce(sum(n), 0) from point_blocks where stat_id = ${id} and seq > 0)::int as writes`
  return r
}

test.serial('a read spanning hot rows and blocks sees every point once, exact; rollups and the chart do not change', async (t) => {
  const { user, key } = await account()
  // Four days back and 100 minutes ending over two hours ago (compacted too: past the hot window and the hour's
  // stretch its edge is rounded down to, whatever the minute the test runs in), on one stat.
  const old = series(dayOf(NOW) - 4 * DAY + 5, 600, 60, 3)
  const recent = series(NOW - 4 * 3600, 100, 60, 4)
  await write(key, 'spanning', [...old, ...recent])
  const id = await statId(user.accountId, 'spanning')
  // Folded now: a chart partly from the unfolded tail sums in another order (the last bits of an average differ).
  await refreshRollups(app.sql)
  // The chart's buckets (its other fields say how fresh the rollups are, which moves on by itself).
  const chartBefore = (await request(app.url, `/api/v1/stats/spanning?from=${iso(NOW - 5 * DAY)}&to=${iso(NOW)}`, { bearer: key })).body
    .points
  t.true(chartBefore.length > 0)
  const before = await exported(key, 'spanning')
  t.deepEqual(before, sorted([...old, ...recent]))
  // Minute buckets' percentiles come from raw points (not sketches): an hour inside the compacted day.
  const hourAgo = `/api/v1/stats/spanning?from=${iso(old[0].t + 60)}&to=${iso(old[0].t + 3660)}&percentiles=50,95`
  const pctBefore = await request(app.url, hourAgo, { bearer: key })
  t.is(pctBefore.status, 200, pctBefore.text)
  t.true(pctBefore.body.points.length > 0 && pctBefore.body.points.filter((b: { p95?: number }) => typeof b.p95 === 'number').length >= 50)

  await compactPoints(app.sql, new Date())
  const c = await counts(id)
  t.true(c.blocks >= 1)
  t.is(c.packed, old.length + recent.length, 'every point older than the hot edge is in a block')
  t.is(c.writes, 0, "write blocks merged into their day's block")
  t.is(c.hot, 0)
  t.deepEqual(await exported(key, 'spanning'), before)
  // Equal but for the last bits of an average: the rollup refresh folds a minute's points in whatever batches
  // the scheduled passes took them, and floating-point sums depend on that order.
  t.deepEqual(
    roundedBuckets(
      (await request(app.url, `/api/v1/stats/spanning?from=${iso(NOW - 5 * DAY)}&to=${iso(NOW)}`, { bearer: key })).body.points,
    ),
    roundedBuckets(chartBefore),
  )
  t.deepEqual((await request(app.url, hourAgo, { bearer: key })).body.points, pctBefore.body.points)
  // A second pass finds nothing to do and changes nothing.
  await compactPoints(app.sql, new Date())
  t.deepEqual(await counts(id), c)
  t.deepEqual(await exported(key, 'spanning'), before)
  // The stat's newest point in a block only: the list still knows when it last had a point.
  const idle = series(dayOf(NOW) - 3 * DAY + 100, 10, 10, 5)
  await write(key, 'idle', idle)
  await compactPoints(app.sql, new Date())
  const listed = (await listStats(app.sql, user.accountId)).find((s) => s.name === 'idle')!
  t.is(listed.lastPointAt?.getTime(), idle[idle.length - 1].t * 1000)
  t.is((await counts(listed.id)).hot, 0)
})

test.serial('a compaction killed half-way loses nothing and doubles nothing, and the next pass finishes it', async (t) => {
  const { user, key } = await account()
  const days = [5, 4, 3].map((d) => series(dayOf(NOW) - d * DAY + 30, 300, 120, d))
  await write(key, 'killed', days.flat())
  const id = await statId(user.accountId, 'killed')
  const before = await exported(key, 'killed')

  // Another session holds the second day's block lock, so the pass commits the first day and waits inside the second's
  // transaction, which is then cut off mid-way.
  const holder = createSql(app.config.databaseUrl, { max: 1 })
  const victim = createSql(app.config.databaseUrl, { max: 1, applicationName: 'compaction-victim' })
  t.teardown(async () => {
    await holder.end({ timeout: 1 })
    await victim.end({ timeout: 1 })
  })
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let locked!: () => void
  const isLocked = new Promise<void>((r) => (locked = r))
  const holding = holder.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(26, hashtext(${blockLock(id, new Date((dayOf(NOW) - 4 * DAY) * 1000))}))`
    locked()
    await held
  })
  await isLocked
  const pass = compactPoints(victim, new Date())
  let waiting = false
  for (let i = 0; i < 200 && !waiting; i++) {
    await sleep(25)
    const [w] = await app.sql<
      { n: number }[]
    >`select count(*)::int as n from pg_stat_activity where application_name = 'compaction-victim' and wait_event_type = 'Lock'`
    waiting = w.n > 0
  }
  t.true(waiting, 'the pass is waiting inside the second day')
  // The waiting statement is cancelled (what PostgreSQL does to the open transaction of a worker that died: it rolls back).
  await app.sql`select pg_cancel_backend(pid) from pg_stat_activity where application_name = 'compaction-victim'`
  await t.throwsAsync(pass)
  release()
  await holding

  const half = await counts(id)
  t.is(half.blocks, 1, 'the first day committed alone')
  t.is(half.packed + half.hot + half.writes, 900)
  t.deepEqual(await exported(key, 'killed'), before)

  await compactPoints(app.sql, new Date())
  const done = await counts(id)
  t.deepEqual(done, { hot: 0, blocks: 3, packed: 900, writes: 0 })
  t.deepEqual(await exported(key, 'killed'), before)
})

test.serial('an ikey retry of a point already compacted is not stored twice; a same-second retry is reported as a replay', async (t) => {
  const { user, key } = await account()
  const at = dayOf(NOW) - 3 * DAY + 777
  const first = await request(app.url, '/ez', { json: { ezkey: key, stat: 'retried', value: 12.5, t: at, ikey: 'k-1' } })
  t.true(first.status === 200 || first.status === 202)
  await write(key, 'retried', series(at + 1, 50, 10, 1))
  await compactPoints(app.sql, new Date())
  const id = await statId(user.accountId, 'retried')
  t.deepEqual(await counts(id), { hot: 0, blocks: 1, packed: 51, writes: 0 })

  const again = await request(app.url, '/ez', { json: { ezkey: key, stat: 'retried', value: 12.5, t: at, ikey: 'k-1' } })
  t.true(again.status === 200 || again.status === 202)
  t.is(again.body.replay, 'duplicate_ignored')
  await settle(app)
  const points = await exported(key, 'retried')
  t.is(points.filter((p) => p.t === at).length, 1)
  t.is(points.length, 51)
  t.is((await counts(id)).hot, 0)

  // Without an ikey, a write at a second the block holds is told it averages with what is there, found in PostgreSQL
  // once Redis has forgotten the second (its marks expire); an empty second of the same day is not.
  const redis = createRedis({ redisUrl: app.config.redisUrl })
  t.teardown(() => redis.disconnect())
  await redis.del(redisKey(app.config, 'seen', id, String(at + 1)), redisKey(app.config, 'seen', id, String(at + 5)))
  const same = await request(app.url, '/ez', { json: { ezkey: key, stat: 'retried', value: 3, t: at + 1 } })
  t.is(same.body.replay, 'averages_with_existing')
  const empty = await request(app.url, '/ez', { json: { ezkey: key, stat: 'retried', value: 3, t: at + 5 } })
  t.is(empty.status, same.status)
  t.is(empty.body.replay, undefined)
})

test.serial('a stat deleted mid-compaction leaves neither rows nor blocks behind', async (t) => {
  const { user, key } = await account()
  await write(
    key,
    'doomed',
    [5, 4].flatMap((d) => series(dayOf(NOW) - d * DAY + 60, 100, 300, d)),
  )
  await write(key, 'survivor', series(dayOf(NOW) - 5 * DAY + 60, 100, 300, 9))
  const id = await statId(user.accountId, 'doomed')
  const survivor = await statId(user.accountId, 'survivor')
  const survivorBefore = await exported(key, 'survivor')

  const holder = createSql(app.config.databaseUrl, { max: 1 })
  t.teardown(() => holder.end({ timeout: 1 }))
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let locked!: () => void
  const isLocked = new Promise<void>((r) => (locked = r))
  const holding = holder.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(26, hashtext(${blockLock(id, new Date((dayOf(NOW) - 4 * DAY) * 1000))}))`
    locked()
    await held
  })
  await isLocked
  const pass = compactPoints(app.sql, new Date())
  for (let i = 0; i < 200 && (await counts(id)).blocks === 0; i++) await sleep(25)
  t.is((await counts(id)).blocks, 1, 'the first day is a block, the second waits')
  const del = await request(app.url, '/api/v1/stats/doomed', { method: 'DELETE', bearer: key })
  t.true(del.status === 200 || del.status === 204, del.text)
  release()
  await holding
  await pass
  t.deepEqual(await counts(id), { hot: 0, blocks: 0, packed: 0, writes: 0 })
  t.is((await counts(survivor)).packed, 100)
  t.deepEqual(await exported(key, 'survivor'), survivorBefore)
})

test.serial('a backfill into a compacted day is read at once and merged into its block by the next pass', async (t) => {
  const { user, key } = await account()
  const base = dayOf(NOW) - 3 * DAY
  const first = series(base + 10, 200, 60, 7)
  await write(key, 'backfilled', first)
  await compactPoints(app.sql, new Date())
  const id = await statId(user.accountId, 'backfilled')
  t.deepEqual(await counts(id), { hot: 0, blocks: 1, packed: 200, writes: 0 })

  // Late points between and on top of the block's (one at a second already held: both kept, as writes keep them).
  const late = [...series(base + 40, 100, 60, 8), { t: first[5].t, value: 99.25 }]
  await write(key, 'backfilled', late)
  t.deepEqual(await exported(key, 'backfilled'), sorted([...first, ...late]))
  const unmerged = await counts(id)
  t.is(unmerged.hot + unmerged.writes, late.length)
  t.is(unmerged.packed, 200)
  await compactPoints(app.sql, new Date())
  t.deepEqual(await counts(id), { hot: 0, blocks: 1, packed: 301, writes: 0 })
  t.deepEqual(await exported(key, 'backfilled'), sorted([...first, ...late]))
})

test.serial('retention deletes whole blocks past the cutoff in bulk and rewrites the one straddling it', async (t) => {
  const { user } = await account()
  // A free account keeps 30 days: points 34 to 28 days back, stored straight into a fresh stat (writes so old are a
  // backfill like any other), then compacted.
  const [{ id }] = await app.sql<
    { id: string }[]
  >`insert into stats (account_id, name, kind) values (${user.accountId}, 'aged', 'gauge') returning id`
  // Midday: the straddling day holds 12 hours past the cutoff, over the 6 that make a rewrite worth it.
  const now = new Date((dayOf(NOW) + 12 * 3600 + 123) * 1000)
  const cutoff = dayOf(NOW) + 12 * 3600 + 123 - 30 * DAY
  const from = dayOf(cutoff) - 3 * DAY
  const pts = series(from, Math.ceil((dayOf(cutoff) + 2 * DAY - from) / 600), 600, 2)
  await app.sql`insert into points (stat_id, ts, value)
    select ${id}, to_timestamp(t), v from unnest(${pts.map((p) => p.t)}::bigint[], ${pts.map((p) => p.value)}::float8[]) as u(t, v)`
  await compactPoints(app.sql, now)
  const c = await counts(id)
  t.is(c.blocks, 5)
  t.is(c.hot, 0)
  const kept = pts.filter((p) => p.t >= cutoff)

  const r = await enforceRetention(app.sql, now)
  t.true(r.points >= pts.length - kept.length)
  const after = await counts(id)
  t.is(after.blocks, 2, 'three whole days went, the straddling day was rewritten, the next kept')
  t.is(after.packed, kept.length)
  const rows = await app.sql<{ t: number; value: number }[]>`
    select extract(epoch from ts)::int as t, value from stat_points(${id}, '-infinity', 'infinity') order by ts`
  t.deepEqual(
    rows.map((x) => ({ t: x.t, value: x.value })),
    kept,
  )
  // Nothing left to expire: a second run removes nothing of this stat; an hour later the straddling block holds an hour
  // of expired points, under the rewrite threshold, and stays as it is.
  await enforceRetention(app.sql, now)
  t.deepEqual(await counts(id), after)
  await enforceRetention(app.sql, new Date(now.getTime() + 3_600_000))
  t.deepEqual(await counts(id), after)
})

test.serial('a pass that empties most of the hot table rebuilds its index: its disk comes back, every point is still read', async (t) => {
  const { user, key } = await account()
  await write(key, 'burst', [{ t: NOW - 60, value: 1 }])
  const id = await statId(user.accountId, 'burst')
  // A backfill burst of 200,000 points ten days back (a point every 2 s), straight into the hot table as the persist job stores them.
  const from = dayOf(NOW) - 10 * DAY
  await app.sql`insert into points (stat_id, ts, value) select ${id}, to_timestamp(${from} + 2 * i), round((i % 1000) / 100.0, 2) from generate_series(0, 199999) i`
  const indexBytes = async () => Number((await app.sql<{ n: string }[]>`select pg_relation_size('points_stat_ts_idx')::text as n`)[0].n)
  const before = await indexBytes()
  const pass = await compactPoints(app.sql, new Date(), { indexMinBytes: 1024 * 1024 })
  t.true(pass.points >= 200_000)
  t.deepEqual(pass.hotIndex, { before, after: await indexBytes() })
  t.true(pass.hotIndex!.after < before / 4, `index ${before} -> ${pass.hotIndex!.after} bytes`)
  const [idx] = await app.sql<{ valid: boolean; copies: number }[]>`
    select (select indisvalid from pg_index where indexrelid = 'points_stat_ts_idx'::regclass) as valid,
           (select count(*)::int from pg_class where relname like 'points_stat_ts_idx_ccnew%') as copies`
  t.deepEqual(idx, { valid: true, copies: 0 })
  const [r] = await app.sql<
    { n: number; sum: number }[]
  >`select count(*)::int as n, round(sum(value)::numeric, 2)::float8 as sum from stat_points(${id}, '-infinity', 'infinity')`
  t.deepEqual(r, { n: 200_001, sum: 1 + 200 * 4995 })
  t.is((await counts(id)).hot, 1)
  // Nothing left to give back: the next pass leaves the index alone.
  await write(key, 'burst', [{ t: from + 7, value: 2 }])
  t.is((await compactPoints(app.sql, new Date(), { indexMinBytes: 1024 * 1024 })).hotIndex, undefined)
})

test('the cutoff keeps today and yesterday hot', (t) => {
  const now = new Date(Date.UTC(2026, 0, 10, 13, 5))
  t.is(compactionCutoff(now).toISOString(), '2026-01-09T00:00:00.000Z')
})

test('the export decodes a block exactly as PostgreSQL does: scaled values past 2^53, negatives, raw doubles, a range inside the day', async (t) => {
  const day = dayOf(NOW) - 5 * DAY
  const cases: number[][] = [
    [0.01, -0.02, 123456789.123456, -999999999999.5, 42, 1e-6, 0],
    [0.1 + 0.2, Math.PI, -Math.E, 1e300, 5e-324, 7],
  ]
  for (const values of cases) {
    const secs = values.map((_, i) => day + 10 * i)
    const [b] = await app.sql<Array<BlockColumns & { decoded: Array<{ us: string; value: number }> }>>`
      with e as (
        select * from point_block_encode(${new Date(day * 1000)},
          (select array_agg(to_timestamp(x) order by o) from unnest(${secs}::float8[]) with ordinality u(x, o)), ${values}::float8[])
      )
      select ${new Date(day * 1000)}::timestamptz as day, e.dts, e.scale, e.ivals, e.fvals,
        (select json_agg(json_build_object('us', (extract(epoch from d.ts) * 1000000)::int8::text, 'value', d.value))
         from point_block_decode(${new Date(day * 1000)}, e.dts, e.scale, e.ivals, e.fvals) d) as decoded
      from e`
    // The first case is scaled by 10^6, its integers past 2^53; the second cannot be scaled and keeps raw doubles.
    t.is(b.scale, values === cases[0] ? 1e6 : null)
    t.deepEqual(decodeBlock(b), b.decoded)
    t.deepEqual(
      decodeBlock(b).map((r) => r.value),
      values,
      `scale ${b.scale}`,
    )
    const cut = decodeBlock(b, (day + 10) * 1e6, (day + 30) * 1e6)
    t.deepEqual(
      cut.map((r) => Number(r.us) / 1e6),
      [day + 10, day + 20],
    )
  }
})
