// The hot window (docs/decisions.md §27): points older than HOT_WINDOW_MINUTES move from rows into blocks, today's
// included; the one reader (seriesPoints, and SQL's stat_points) gives every point once and in order across the hot
// edge; a day compacted pass by pass ends as one block; the alert evaluator reads a minute that is already in blocks.
// Real PostgreSQL, Redis and HTTP server. Passes run at instants the test picks (the scheduled one keeps two days
// hot here, so it never moves these tests' points).
import test from 'ava'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { compactPoints, hotEdge, MERGE_AT_BLOCKS, shrinkHotHeap } from '../../shared/points/compaction.js'
import { seriesPoints } from '../../shared/points/read.js'
import { listStats } from '../../shared/stats/repo.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { eventually, startHttpReceiver, type HttpReceiver } from '../helpers/receivers.js'
import { settle } from '../helpers/storage.js'

let app: TestApp
let receiver: HttpReceiver
test.before(async () => {
  receiver = await startHttpReceiver()
  app = await startTestApp({ HOT_WINDOW_MINUTES: '2880', ALERT_EVAL_INTERVAL_SECONDS: '3600' })
  await app.startWorkers()
})
test.after.always(async () => {
  await app?.close()
  await receiver?.close()
})

const DAY = 86_400
const NOW = Math.floor(Date.now() / 1000)
const dayOf = (t: number) => Math.floor(t / DAY) * DAY
const us = (t: number) => BigInt(t) * 1_000_000n

async function account() {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  return { user, key }
}

async function write(key: string, stat: string, points: Array<{ t: number; value: number }>) {
  for (let i = 0; i < points.length; i += 100) {
    const res = await request(app.url, '/ez', { json: { ezkey: key, data: points.slice(i, i + 100).map((p) => ({ stat, ...p })) } })
    if (res.status !== 202 && res.status !== 200) throw new Error(`${res.status} ${res.text}`)
  }
  await settle(app)
}

const statId = async (accountId: string, name: string) => (await listStats(app.sql, accountId)).find((s) => s.name === name)!.id

/** Where the stat's points are: rows, and the points in blocks (seq 0: a day's block; seq > 0: small and write blocks). */
async function where(id: string, day?: number) {
  const d = day === undefined ? null : new Date(day * 1000)
  const [r] = await app.sql<{ hot: number; blocks: number; small: number; packed: number }[]>`
    select (select count(*) from points where stat_id = ${id})::int as hot,
           (select count(*) from point_blocks where stat_id = ${id} and (${d}::timestamptz is null or day = ${d}))::int as blocks,
           (select count(*) from point_blocks where stat_id = ${id} and seq > 0 and (${d}::timestamptz is null or day = ${d}))::int as small,
           (select coalesce(sum(n), 0) from point_blocks where stat_id = ${id})::int as packed`
  return r
}

/** The reader's points as (t, value), and whether they come in time order. */
async function read(id: string, from: number, to: number) {
  const rows = await seriesPoints(app.sql, id, us(from), us(to))
  const ordered = rows.every((r, i) => i === 0 || BigInt(rows[i - 1].us) <= BigInt(r.us))
  return { ordered, points: rows.map((r) => ({ t: Number(BigInt(r.us) / 1_000_000n), value: r.value })) }
}
const byTime = (ps: Array<{ t: number; value: number }>) => [...ps].sort((a, b) => a.t - b.t || a.value - b.value)

test.serial('the reader gives every point once, in order, across the hot edge; stat_points agrees', async (t) => {
  const { user, key } = await account()
  // Three hours at 30 s up to now, two-decimal values with a raw double now and then.
  const points = Array.from({ length: 360 }, (_, i) => ({
    t: NOW - 3 * 3600 + i * 30,
    value: i % 11 === 5 ? (i + 1) / 3 : (i % 97) + 0.25,
  }))
  await write(key, 'edge', points)
  const id = await statId(user.accountId, 'edge')
  const edge = hotEdge(new Date(NOW * 1000), 60).getTime() / 1000
  const pass = await compactPoints(app.sql, new Date(NOW * 1000), { hotWindowMinutes: 60 })
  const older = points.filter((p) => p.t < edge)
  t.is(pass.points, older.length, 'every point older than the edge moved')
  const w = await where(id)
  t.is(w.hot, points.length - older.length)
  t.is(w.packed, older.length)
  t.true(w.hot > 0 && w.packed > 0, 'the range has both sides')

  // A late point before the edge (a row beside the block) and a second point at a second a block already holds.
  const late = [
    { t: edge - 1805, value: 7.5 },
    { t: points[10].t, value: 123.5 },
  ]
  await write(key, 'edge', late)
  const all = byTime([...points, ...late])
  const whole = await read(id, NOW - 4 * 3600, NOW + 60)
  t.true(whole.ordered)
  t.deepEqual(byTime(whole.points), all)
  // A range inside both sides, ends exclusive.
  const from = edge - 900
  const to = edge + 900
  const part = await read(id, from, to)
  t.true(part.ordered)
  t.deepEqual(
    byTime(part.points),
    all.filter((p) => p.t >= from && p.t < to),
  )
  const sqlSide = await app.sql<{ t: number; value: number }[]>`
    select extract(epoch from ts)::int as t, value from stat_points(${id}, ${new Date(from * 1000)}, ${new Date(to * 1000)})`
  t.deepEqual(byTime([...sqlSide]), byTime(part.points))
  // The export reads through the same function.
  const res = await request(app.url, '/api/v1/export', { bearer: key })
  t.is(res.status, 200, res.text)
  const exported = (res.body.stats as Array<{ name: string; points: Array<{ t: number; value: number }> }>).find((s) => s.name === 'edge')!
  t.deepEqual(byTime(exported.points.map(({ t, value }) => ({ t, value }))), all)
})

test.serial('a day compacted pass by pass keeps every point once and few blocks, and ends as one block', async (t) => {
  const { user, key } = await account()
  // Yesterday's points arrive as rows (write blocks are for older days): one a minute, all day.
  const day = dayOf(NOW) - DAY
  const points = Array.from({ length: 1440 }, (_, i) => ({ t: day + i * 60, value: Math.round(1000 * Math.sin(i / 50)) / 100 }))
  await write(key, 'daily', points)
  const id = await statId(user.accountId, 'daily')
  t.is((await where(id)).hot, 1440)
  let maxBlocks = 0
  for (let h = 0; h < 24; h++) {
    const now = new Date((day + h * 3600 + 70 * 60) * 1000)
    await compactPoints(app.sql, now, { hotWindowMinutes: 60 })
    const edge = hotEdge(now, 60).getTime() / 1000
    const w = await where(id, day)
    t.is(w.hot, points.filter((p) => p.t >= edge).length, `hour ${h}: rows are the window's`)
    t.is(w.hot + w.packed, 1440, `hour ${h}: every point once`)
    maxBlocks = Math.max(maxBlocks, w.blocks)
    const got = await read(id, day, day + DAY)
    t.true(got.ordered)
    t.deepEqual(got.points, points, `hour ${h}: read back exactly`)
  }
  // The small blocks are merged into the day's block when they hold as many points, or are MERGE_AT_BLOCKS.
  t.true(maxBlocks > 1 && maxBlocks <= MERGE_AT_BLOCKS + 1, `the day's block and its small ones (saw ${maxBlocks})`)
  // The day complete: one block, no rows, nothing small left.
  await compactPoints(app.sql, new Date((day + DAY + 70 * 60) * 1000), { hotWindowMinutes: 60 })
  t.deepEqual(await where(id, day), { hot: 0, blocks: 1, small: 0, packed: 1440 })
  t.deepEqual((await read(id, day, day + DAY)).points, points)
  // Another pass leaves the day's block as it is: the same row version. (The pass may move other tests' points:
  // before 01:20 UTC the real now's rows fall inside its window, so its count is not this stat's.)
  const version = () => app.sql`select xmin::text as v from point_blocks where stat_id = ${id} and day = ${new Date(day * 1000)}`
  const before = await version()
  await compactPoints(app.sql, new Date((day + DAY + 80 * 60) * 1000), { hotWindowMinutes: 60 })
  t.deepEqual(await version(), before)
  t.deepEqual(await where(id, day), { hot: 0, blocks: 1, small: 0, packed: 1440 })
})

test.serial('the alert evaluator reads a minute already compacted', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  // The edge of a window of 0 minutes: the last stretch boundary. The evaluated minute ends there.
  const at = hotEdge(new Date(), 0)
  const end = at.getTime() / 1000
  const points = Array.from({ length: 90 }, (_, i) => ({
    t: end - 900 + i * 10,
    value: end - 900 + i * 10 >= end - 60 ? 600 + (i % 2) : 100,
  }))
  await write(key, 'cpu', points)
  const alert = await request(app.url, '/api/v1/alerts', {
    bearer: key,
    json: {
      stat_name: 'cpu',
      condition_type: 'above',
      threshold: 500,
      window_minutes: 5,
      channel: 'webhook',
      channel_config: { webhook_url: receiver.url },
    },
  })
  t.is(alert.status, 201, alert.text)
  const id = await statId(user.accountId, 'cpu')
  await compactPoints(app.sql, new Date(), { hotWindowMinutes: 0 })
  const [{ hot }] = await app.sql<{ hot: number }[]>`
    select count(*)::int as hot from points where stat_id = ${id} and ts >= ${new Date((end - 60) * 1000)} and ts < ${at}`
  t.is(hot, 0, 'the minute is in blocks only')
  await eventually(async () => !(await evaluateAlerts(app.sql, at)).skipped, 'an evaluation pass')
  const [row] = await app.sql<
    { state: string; last_value: number }[]
  >`select state, last_value from alerts where id = ${alert.body.alert.id}`
  t.is(row.state, 'firing')
  t.is(row.last_value, 600.5)
})

test.serial('a pass that empties a heap whose live rows are at its end gives its pages back; every point is still read', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  await write(key, 'tail', [{ t: NOW - 30, value: 0.5 }])
  const id = await statId(user.accountId, 'tail')
  // History of a week ago stored as rows first, the newest points after it: the hot rows sit in the heap's last pages.
  await app.sql`insert into points (stat_id, ts, value) select ${id}, to_timestamp(${dayOf(NOW) - 7 * DAY} + 2 * i), (i % 100)::float8 from generate_series(0, 149999) i`
  const recent = Array.from({ length: 50 }, (_, i) => ({ t: NOW - 600 + i * 10, value: i }))
  await write(key, 'tail', recent)
  const heap = async () => Number((await app.sql<{ n: string }[]>`select pg_relation_size('points')::text as n`)[0].n)
  const before = await heap()
  const pass = await compactPoints(app.sql, new Date(), { indexMinBytes: 1024 * 1024, hotWindowMinutes: 60 })
  t.true(pass.points >= 150_000)
  // The pass gave the pages back, or (the scheduled pass holding the one-at-a-time lock, a query on the table
  // making VACUUM skip its truncation) a later attempt does.
  // What the pass controls is where the live rows are: moved to the heap's front, so that VACUUM can give the
  // tail back. VACUUM skips that truncation while it cannot take its lock at once (a concurrent reader), so the
  // size is logged and the rows' places asserted. The compaction above shrinks when it can; a pass that found
  // the one-at-a-time lock taken (the scheduled one) is tried again until the rows are at the front.
  const lastPage = async () =>
    (await app.sql<{ last: number }[]>`select coalesce(max((ctid::text::point)[0]), 0)::int as last from points`)[0].last
  const last = await eventually(async () => {
    const page = await lastPage()
    if ((page + 1) * 8192 < before / 4) return { page }
    await shrinkHotHeap(app.sql, 1024 * 1024)
    return null
  }, "the live rows at the heap's front")
  t.log(`heap ${before} -> ${await heap()} bytes; last live row on page ${last.page}`)
  t.true((last.page + 1) * 8192 < before / 4)
  const [r] = await app.sql<{ n: number; hot: number }[]>`
    select (select count(*) from stat_points(${id}, '-infinity', 'infinity'))::int as n, (select count(*) from points where stat_id = ${id})::int as hot`
  t.deepEqual(r, { n: 150_051, hot: 51 })
  t.deepEqual(byTime((await read(id, NOW - 600, NOW)).points), byTime([...recent, { t: NOW - 30, value: 0.5 }]))
})

test.serial(
  'appending the blocks of a day gives the very block that encoding all their points gives; overlapping or differently scaled blocks are left alone',
  async (t) => {
    const { user } = await account()
    const day = new Date((dayOf(NOW) - 3 * DAY) * 1000)
    const cols = 'n, first_ts, last_ts, dts, scale, ivals::text[] as ivals, fvals'
    /** A new stat whose day holds one block per part (block 0 for the first part when `base`), each encoded from its points. */
    const blocksOf = async (parts: Array<Array<[number, number]>>, base: boolean) => {
      const [{ id }] = await app.sql<{ id: string }[]>`
      insert into stats (account_id, name, kind) values (${user.accountId}, ${`append.${Math.random()}`}, 'gauge') returning id`
      for (const [i, part] of parts.entries()) {
        await app.sql`
        insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
        select ${id}, ${day}, ${base && i === 0 ? 0 : app.sql`nextval('point_write_seq')`}, e.* from point_block_encode(${day},
          ${part.map(([s]) => new Date(day.getTime() + s * 1000).toISOString())}::timestamptz[], ${part.map(([, v]) => v)}::float8[]) e`
      }
      return id
    }
    const expected = async (parts: Array<Array<[number, number]>>) => {
      const all = parts.flat()
      const [e] = await app.sql`select ${app.sql.unsafe(cols)} from point_block_encode(${day},
      ${all.map(([s]) => new Date(day.getTime() + s * 1000).toISOString())}::timestamptz[], ${all.map(([, v]) => v)}::float8[])`
      return e
    }
    const blocks = async (id: string) =>
      app.sql`select seq, ${app.sql.unsafe(cols)} from point_blocks where stat_id = ${id} and day = ${day} order by seq`
    const append = async (id: string) => (await app.sql<{ m: number | null }[]>`select point_blocks_append(${id}, ${day}) as m`)[0].m
    const run = (from: number, n: number, v: (i: number) => number): Array<[number, number]> =>
      Array.from({ length: n }, (_, i) => [from + i * 10, v(from + i)])

    // Two-decimal values, negatives, scaled values past 2^53 in sum; a block 0 and three small blocks after it.
    const scaled = [
      run(0, 100, (i) => Math.round(Math.sin(i / 7) * 10_000) / 100),
      run(5000, 60, (i) => -i / 100),
      run(9000, 60, () => 90_000_000_000.25),
      run(20_000, 3, (i) => i / 4),
    ]
    const a = await blocksOf(scaled, true)
    t.is(await append(a), 123)
    const [merged] = await blocks(a)
    t.is(merged.seq, '0')
    t.deepEqual({ ...merged, seq: undefined }, { ...(await expected(scaled)), seq: undefined })
    // Raw doubles (no scale), no block 0: the first in time becomes it.
    const raw = [run(3000, 30, (i) => i / 3), run(100, 30, (i) => i / 7), run(8000, 5, (i) => Math.PI * i)]
    const b = await blocksOf(raw, false)
    t.is(await append(b), 65)
    const rb = await blocks(b)
    t.is(rb.length, 1)
    t.deepEqual({ ...rb[0], seq: undefined }, { ...(await expected(raw)), seq: undefined })
    t.is(rb[0].scale, null)
    // One small block alone becomes block 0 as it is.
    const one = [run(50, 20, (i) => i)]
    const c = await blocksOf(one, false)
    t.is(await append(c), 20)
    t.like((await blocks(c))[0], { seq: '0', n: 20 })
    // A block overlapping the one before it in time, and blocks of different scales: null, nothing changed.
    const overlap = [run(0, 50, (i) => i / 100), run(305, 10, (i) => i / 100)]
    const d = await blocksOf(overlap, true)
    const before = await blocks(d)
    t.is(await append(d), null)
    t.deepEqual(await blocks(d), before)
    const scales = [run(0, 50, (i) => i / 100), run(1000, 10, (i) => i)]
    const e = await blocksOf(scales, true)
    t.is(await append(e), null)
    t.is((await blocks(e)).length, 2)
    // The compaction then decodes and encodes them: one block, every point.
    for (const [id, parts] of [
      [d, overlap],
      [e, scales],
    ] as const) {
      t.true((await compactPoints(app.sql, new Date(), { hotWindowMinutes: 60 })).points >= 0)
      const got = await blocks(id)
      t.is(got.length, 1, 'merged into block 0')
      t.deepEqual({ ...got[0], seq: undefined }, { ...(await expected(parts)), seq: undefined })
    }
  },
)
