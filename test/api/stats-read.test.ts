// Reading stats back (docs/decisions.md §I-2.2 rules 5-6, 4.3; §6):
// GET /api/v1/stats and GET /api/v1/stats/:name with range or from/to.
import test, { type ExecutionContext } from 'ava'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { pauseRollups, settle } from '../helpers/storage.js'
import { planOf } from '../../shared/plans.js'
import { readStatChart } from '../../shared/stats/chart.js'
import { statJson } from '../../shared/stats/json.js'
import { clampToRetention, resolveWindow, windowJson } from '../../shared/stats/ranges.js'
import { readBuckets } from '../../shared/stats/read.js'
import { findStatByRawName } from '../../shared/stats/repo.js'
import { listSeries } from '../../shared/stats/series.js'

const app = appSuite({ workers: true })
test.before(async () => {
  // The scheduled rollup refresh (every 2 s) is paused so that a read straight after
  // settle() is known to come from rollup_pending; tests fold rollups themselves.
  await pauseRollups(app)
})

const nowS = () => Math.floor(Date.now() / 1000)
const enc = encodeURIComponent
const MIN = 60
const HOUR = 3_600
const DAY = 86_400

/** docs/decisions.md §6: range -> span and chart bucket. */
const RANGES: Record<string, { seconds: number; bucket: number }> = {
  '1h': { seconds: HOUR, bucket: 60 },
  '6h': { seconds: 6 * HOUR, bucket: 300 },
  '24h': { seconds: DAY, bucket: 900 },
  '7d': { seconds: 7 * DAY, bucket: 3_600 },
  '30d': { seconds: 30 * DAY, bucket: 21_600 },
  '90d': { seconds: 90 * DAY, bucket: 86_400 },
  '180d': { seconds: 180 * DAY, bucket: 86_400 },
}
const VALID_SET = '1h, 6h, 24h, 7d, 30d, 90d, 180d'

interface Point {
  stat: string
  t: number
  count?: number
  value?: number
  tags?: Record<string, string>
}
interface Bucket {
  t: number
  value: number
  n: number
  min?: number
  max?: number
}

async function keyed(): Promise<{ user: User; key: string }> {
  const user = await signUp(app.url)
  // A paid plan: these tests write many stats and points.
  await app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  return { user, key: (await createKey(app.url, user)).key }
}

async function write(key: string, points: Point[]): Promise<void> {
  for (let i = 0; i < points.length; i += 1000) {
    const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points: points.slice(i, i + 1000) } })
    if (res.status !== 200) throw new Error(`write failed: ${res.status} ${res.text}`)
  }
  await settle(app)
}

const detail = (key: string, name: string, query = '') => request(app.url, `/api/v1/stats/${enc(name)}${query}`, { bearer: key })

/** What the interface says a read must return: observations in [from, to) grouped by UTC-aligned bucket; counters summed, gauges averaged. */
function expected(points: Point[], kind: 'counter' | 'gauge', from: number, to: number, bucket: number): Bucket[] {
  const groups = new Map<number, number[]>()
  for (const p of points) {
    if (p.t < from || p.t >= to) continue
    const b = Math.floor(p.t / bucket) * bucket
    groups.set(b, [...(groups.get(b) ?? []), (kind === 'counter' ? p.count : p.value)!])
  }
  return [...groups.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([t, vs]) => {
      const sum = vs.reduce((a, v) => a + v, 0)
      return kind === 'counter'
        ? { t, value: sum, n: vs.length }
        : { t, value: sum / vs.length, min: Math.min(...vs), max: Math.max(...vs), n: vs.length }
    })
}

/** Checks the range object of a range read and returns its window in Unix seconds. */
function checkRange(t: ExecutionContext, res: Reply, range: string): { from: number; to: number; bucket: number } {
  t.is(res.status, 200, res.text)
  const { seconds, bucket } = RANGES[range]
  t.is(res.body.range.requested_range, range)
  t.is(res.body.range.bucket_seconds, bucket, `${range} -> ${bucket} s buckets`)
  const from = Date.parse(res.body.range.from) / 1000
  const to = Date.parse(res.body.range.to) / 1000
  t.is(from % bucket, 0, `${range}: from aligned to the bucket in UTC`)
  t.is(
    from,
    Math.floor((Math.floor(to) - seconds) / bucket) * bucket,
    `${range}: from is the start of the bucket holding to - ${seconds} s`,
  )
  t.true(Math.abs(to - Date.now() / 1000) < 30, `${range}: to is now`)
  return { from, to, bucket }
}

/** Reads the stat for every range and compares with the model. Returns the bodies, for comparing reads. */
async function checkAllRanges(
  t: ExecutionContext,
  key: string,
  name: string,
  kind: 'counter' | 'gauge',
  points: Point[],
  label: string,
): Promise<Record<string, Bucket[]>> {
  const out: Record<string, Bucket[]> = {}
  for (const range of Object.keys(RANGES)) {
    const res = await detail(key, name, `?range=${range}`)
    const { from, to, bucket } = checkRange(t, res, range)
    t.deepEqual(res.body.points, expected(points, kind, from, to, bucket), `${label}: ${kind} ${range}`)
    for (const b of res.body.points as Bucket[]) t.is(b.t % bucket, 0, `${label}: ${range} bucket ${b.t} aligned`)
    out[range] = res.body.points
  }
  return out
}

/** Points spread over the last 200 days, kept well away from every range's edges; several share a bucket and some share a second. */
function spread(now: number, stat: string, kind: 'counter' | 'gauge'): Point[] {
  const agos = [
    5,
    5,
    40,
    2 * MIN + 10,
    2 * MIN + 30,
    10 * MIN,
    25 * MIN,
    40 * MIN,
    90 * MIN,
    4 * HOUR,
    5 * HOUR + 100,
    10 * HOUR,
    20 * HOUR,
    30 * HOUR,
    3 * DAY,
    6 * DAY,
    8 * DAY,
    20 * DAY,
    20 * DAY + 60,
    29 * DAY,
    45 * DAY,
    60 * DAY,
    89 * DAY,
    100 * DAY,
    150 * DAY,
    179 * DAY,
    200 * DAY,
  ]
  return agos.map((ago, i) =>
    kind === 'counter' ? { stat, t: now - ago, count: i + 1 } : { stat, t: now - ago, value: (i % 7) * 1.5 - 3 },
  )
}

// ---------------------------------------------------------------- GET /api/v1/stats

test("GET /api/v1/stats lists the account's stats only (account isolation)", async (t) => {
  const a = await keyed()
  const b = await keyed()
  const tt = nowS() - 3 * HOUR
  await write(a.key, [
    { stat: 'orders', t: tt, count: 1 },
    { stat: 'orders', t: tt - 100, count: 1 },
    { stat: 'cpu', t: tt + 60, value: 3 },
    { stat: 'only a', t: tt, count: 1 },
  ])
  await write(b.key, [{ stat: 'orders', t: tt, count: 9 }])
  const listA = await request(app.url, '/api/v1/stats', { bearer: a.key })
  t.is(listA.status, 200)
  t.deepEqual(
    listA.body.stats.map((s: { name: string }) => s.name),
    ['cpu', 'only a', 'orders'],
  )
  for (const s of listA.body.stats)
    t.deepEqual(Object.keys(s).sort(), ['created_at', 'description', 'higher_is', 'id', 'kind', 'last_point_at', 'name', 'series', 'unit'])
  const byName = Object.fromEntries(listA.body.stats.map((s: { name: string }) => [s.name, s]))
  t.is(byName.orders.kind, 'counter')
  t.is(byName.cpu.kind, 'gauge')
  t.is(byName.orders.last_point_at, new Date(tt * 1000).toISOString())
  t.is(byName.cpu.last_point_at, new Date((tt + 60) * 1000).toISOString())
  t.is(byName.orders.description, null)
  t.regex(byName.orders.id, /^[0-9a-f-]{36}$/)
  t.false(Number.isNaN(Date.parse(byName.orders.created_at)))

  const listB = await request(app.url, '/api/v1/stats', { bearer: b.key })
  t.deepEqual(
    listB.body.stats.map((s: { name: string }) => s.name),
    ['orders'],
  )
  t.not(listB.body.stats[0].id, byName.orders.id)
  // The same list through the dashboard session.
  const viaSession = await request(app.url, '/api/v1/stats', { session: a.user.session })
  t.deepEqual(viaSession.body, listA.body)
})

test('GET /api/v1/stats for a new account is an empty list; without credentials 401', async (t) => {
  const { key } = await keyed()
  t.deepEqual((await request(app.url, '/api/v1/stats', { bearer: key })).body, { stats: [] })
  t.is((await request(app.url, '/api/v1/stats')).status, 401)
  t.is((await request(app.url, `/api/v1/stats?ezkey=${key}`)).status, 401, 'a key in the query string does not authenticate')
  t.is((await request(app.url, '/api/v1/stats/x', { bearer: 'forged' })).status, 401)
})

test("GET another account's stat by name is 404; the same name in one's own account shows one's own data only", async (t) => {
  const a = await keyed()
  const b = await keyed()
  const tt = nowS() - 600
  await write(a.key, [
    { stat: 'secret', t: tt, count: 5 },
    { stat: 'shared name', t: tt, count: 1 },
  ])
  await write(b.key, [{ stat: 'shared name', t: tt, count: 100 }])
  const res = await detail(b.key, 'secret')
  t.is(res.status, 404)
  t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/)
  t.is(res.body.status, 404)
  t.false(res.text.includes(tt.toString()))
  const own = await detail(b.key, 'shared name', '?range=1h')
  t.deepEqual(own.body.points, [{ t: Math.floor(tt / 60) * 60, value: 100, n: 1 }])
  const theirs = await detail(a.key, 'shared name', '?range=1h')
  t.deepEqual(theirs.body.points, [{ t: Math.floor(tt / 60) * 60, value: 1, n: 1 }])
})

// ---------------------------------------------------------------- GET /api/v1/stats/:name

test('GET /api/v1/stats/:name returns {stat, range, points}; default range 24h', async (t) => {
  const { key } = await keyed()
  const tt = nowS() - HOUR
  await write(key, [{ stat: 'web hits', t: tt, count: 2 }])
  const res = await detail(key, 'web hits')
  const { bucket } = checkRange(t, res, '24h')
  t.deepEqual(Object.keys(res.body).sort(), ['points', 'range', 'stat'])
  t.like(res.body.stat, { name: 'web hits', kind: 'counter', description: null })
  t.deepEqual(Object.keys(res.body.range).sort(), [
    'bucket_seconds',
    'from',
    'range_clamped_by_retention',
    'requested_range',
    'retention_days',
    'to',
  ])
  t.deepEqual(res.body.points, [{ t: Math.floor(tt / bucket) * bucket, value: 2, n: 1 }])
  const stranger = await signUp(app.url)
  t.is(
    (await request(app.url, `/api/v1/stats/${enc('web hits')}`, { session: stranger.session })).status,
    404,
    'another account, by session',
  )
})

test('each range value returns range.bucket_seconds per docs/decisions.md §6, UTC-aligned buckets, counters summed, empty buckets omitted', async (t) => {
  const { key } = await keyed()
  const points = spread(nowS(), 'spread counter', 'counter')
  await write(key, points)
  await checkAllRanges(t, key, 'spread counter', 'counter', points, 'pending')
})

test('gauges are averaged per bucket with min, max and n', async (t) => {
  const { key } = await keyed()
  const points = spread(nowS(), 'spread gauge', 'gauge')
  await write(key, points)
  const all = await checkAllRanges(t, key, 'spread gauge', 'gauge', points, 'pending')
  for (const b of all['180d']) t.deepEqual(Object.keys(b).sort(), ['max', 'min', 'n', 't', 'value'])
})

test('counter and gauge buckets by hand: 1h range, 60 s buckets', async (t) => {
  const { key } = await keyed()
  const base = Math.floor((nowS() - 30 * MIN) / 60) * 60
  await write(key, [
    { stat: 'c', t: base + 5, count: 2 },
    { stat: 'c', t: base + 59, count: 3 },
    { stat: 'c', t: base + 60, count: 4 },
    { stat: 'c', t: base + 600, count: 0 },
    { stat: 'g', t: base + 1, value: 1 },
    { stat: 'g', t: base + 2, value: 2 },
    { stat: 'g', t: base + 30, value: 6 },
    { stat: 'g', t: base + 180, value: -1.5 },
  ])
  const c = await detail(key, 'c', '?range=1h')
  t.deepEqual(c.body.points, [
    { t: base, value: 5, n: 2 },
    { t: base + 60, value: 4, n: 1 },
    { t: base + 600, value: 0, n: 1 },
  ])
  const g = await detail(key, 'g', '?range=1h')
  t.deepEqual(g.body.points, [
    { t: base, value: 3, min: 1, max: 6, n: 3 },
    { t: base + 180, value: -1.5, min: -1.5, max: -1.5, n: 1 },
  ])
})

test('points written with explicit past t land in the right bucket (7d: hours, 90d: UTC days)', async (t) => {
  const { key } = await keyed()
  const dayStart = Math.floor((nowS() - 10 * DAY) / DAY) * DAY // 00:00 UTC ten days ago
  await write(key, [
    { stat: 'late', t: dayStart + 23 * HOUR + 59 * MIN + 59, count: 1 }, // 23:59:59 UTC
    { stat: 'late', t: dayStart + DAY, count: 10 }, // 00:00:00 UTC the next day
    { stat: 'late', t: dayStart + 5 * HOUR + 1, count: 100 },
  ])
  const d90 = await detail(key, 'late', '?range=90d')
  t.deepEqual(d90.body.points, [
    { t: dayStart, value: 101, n: 2 },
    { t: dayStart + DAY, value: 10, n: 1 },
  ])
  for (const p of d90.body.points) t.true(new Date(p.t * 1000).toISOString().endsWith('T00:00:00.000Z'))
  const d30 = await detail(key, 'late', '?range=30d')
  t.deepEqual(d30.body.points, [
    { t: dayStart, value: 100, n: 1 },
    { t: dayStart + 18 * HOUR, value: 1, n: 1 },
    { t: dayStart + DAY, value: 10, n: 1 },
  ])
  const d7 = await detail(key, 'late', '?range=7d')
  t.deepEqual(d7.body.points, [], 'ten days ago is outside 7d')
})

test('from/to ISO windows: custom range, bucket per span, from aligned down, to exclusive', async (t) => {
  const { key } = await keyed()
  const h = Math.floor((nowS() - 10 * HOUR) / HOUR) * HOUR // an hour start, ten hours ago
  const points: Point[] = [
    { stat: 'w', t: h - 1, count: 1 },
    { stat: 'w', t: h, count: 2 },
    { stat: 'w', t: h + 30 * MIN, count: 4 },
    { stat: 'w', t: h + HOUR - 1, count: 8 },
    { stat: 'w', t: h + HOUR, count: 16 },
  ]
  await write(key, points)
  const iso = (s: number) => new Date(s * 1000).toISOString()

  const hour = await detail(key, 'w', `?from=${enc(iso(h))}&to=${enc(iso(h + HOUR))}`)
  t.is(hour.status, 200, hour.text)
  t.deepEqual(hour.body.range, {
    requested_range: 'custom',
    from: iso(h),
    to: iso(h + HOUR),
    bucket_seconds: 60,
    retention_days: 400,
    range_clamped_by_retention: false,
  })
  t.deepEqual(hour.body.points, [
    { t: h, value: 2, n: 1 },
    { t: h + 30 * MIN, value: 4, n: 1 },
    { t: h + HOUR - 60, value: 8, n: 1 },
  ])

  // A span of 3 days gets the 7d bucket (1 h); from is aligned down to it.
  const days = await detail(key, 'w', `?from=${enc(iso(h - 3 * DAY + 17 * MIN))}&to=${enc(iso(h + 2 * HOUR))}`)
  t.is(days.body.range.bucket_seconds, 3_600)
  t.is(days.body.range.from, iso(h - 3 * DAY))
  t.deepEqual(days.body.points, expected(points, 'counter', h - 3 * DAY, h + 2 * HOUR, 3_600))

  // A date without a time is accepted; only `from` means "until now".
  const since = await detail(key, 'w', `?from=${iso(h - DAY).slice(0, 10)}`)
  t.is(since.status, 200, since.text)
  t.is(since.body.range.requested_range, 'custom')
  t.deepEqual(
    since.body.points.reduce((n: number, b: Bucket) => n + b.n, 0),
    5,
  )
})

test("reads clamp to the plan's retention and say so: a 2023 point is not returned on the free plan", async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const old = Date.UTC(2023, 5, 1) / 1000
  const recent = Math.floor((nowS() - 2 * HOUR) / HOUR) * HOUR
  await write(key, [
    { stat: 'kept', t: old, count: 5 },
    { stat: 'kept', t: recent, count: 7 },
  ])
  const res = await detail(key, 'kept', `?from=2023-01-01&to=${enc(new Date().toISOString())}`)
  t.is(res.status, 200, res.text)
  t.like(res.body.range, { requested_range: 'custom', retention_days: 30, range_clamped_by_retention: true })
  t.true(Date.parse(res.body.range.from) >= Date.now() - 30 * DAY * 1000 - DAY * 1000, `from ${res.body.range.from} is inside the 30 days`)
  t.deepEqual(
    res.body.points.map((b: Bucket) => b.value),
    [7],
  )
  // A window wholly before the retention is empty, not an error.
  const before = await detail(key, 'kept', '?from=2023-01-01&to=2023-12-31')
  t.is(before.status, 200, before.text)
  t.deepEqual(before.body.points, [])
  t.true(before.body.range.range_clamped_by_retention)
  // A window inside the retention is not marked clamped; the dashboard says the same.
  t.false((await detail(key, 'kept', '?range=7d')).body.range.range_clamped_by_retention)
  const dash = await request(app.url, '/api/v1/dashboard?range=180d', { session: user.session })
  t.like(dash.body.range, { retention_days: 30, range_clamped_by_retention: true })
  t.deepEqual(
    dash.body.stats[0].points.map((b: Bucket) => b.value),
    [7],
  )
})

test('from/to windows: from after to, and unparseable dates, are 400', async (t) => {
  const { key } = await keyed()
  await write(key, [{ stat: 'w', t: nowS() - 60, count: 1 }])
  const back = await detail(key, 'w', '?from=2024-02-01T00:00:00Z&to=2024-01-01T00:00:00Z')
  t.is(back.status, 400)
  t.is(back.body.detail, 'from must be before to')
  const bad = await detail(key, 'w', '?from=yesterday')
  t.is(bad.status, 400)
  t.regex(bad.body.detail, /^invalid from/)
})

test('range combined with from (or to) is a 400', async (t) => {
  const { key } = await keyed()
  await write(key, [{ stat: 'w', t: nowS() - 60, count: 1 }])
  for (const q of [
    '?range=24h&from=2024-01-01T00:00:00Z',
    '?range=1h&to=2024-01-01T00:00:00Z',
    '?range=7d&from=2024-01-01&to=2024-01-02',
  ]) {
    const res = await detail(key, 'w', q)
    t.is(res.status, 400, q)
    t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/)
    t.is(res.body.detail, 'range cannot be combined with from or to')
  }
})

test('unknown range is a 400 naming the valid set', async (t) => {
  const { key } = await keyed()
  await write(key, [{ stat: 'w', t: nowS() - 60, count: 1 }])
  for (const r of ['2h', '1d', '24H', 'all', '']) {
    const res = await detail(key, 'w', `?range=${r}`)
    t.is(res.status, 400, `range=${r}`)
    t.is(res.body.detail, `invalid range: must be one of ${VALID_SET}`)
  }
  const repeated = await detail(key, 'w', '?range=1h&range=6h')
  t.is(repeated.status, 400)
})

test('unknown stat is a 404', async (t) => {
  const { key } = await keyed()
  const res = await detail(key, 'never written')
  t.is(res.status, 404)
  t.is(res.body.status, 404)
  t.is((await detail(key, 'bad/name')).status, 404)
})

test('stat names are looked up as stored: URL-encoded spaces, "&" removed', async (t) => {
  const { key } = await keyed()
  const tt = nowS() - 120
  await write(key, [
    { stat: 'cats & dogs', t: tt, count: 3 },
    { stat: 'web hits', t: tt, count: 1 },
  ])
  t.is((await detail(key, 'cats  dogs', '?range=1h')).body.points[0].value, 3)
  t.is((await detail(key, 'cats & dogs', '?range=1h')).body.points[0].value, 3)
  t.is((await detail(key, 'web hits', '?range=1h')).body.stat.name, 'web hits')
})

test.serial('many observations at one second are all kept (append-only): 5 writes of count=1 at the same t sum to 5', async (t) => {
  const { user, key } = await keyed()
  const tt = nowS() - 5 * MIN
  for (let i = 0; i < 5; i++) {
    const res = await request(app.url, '/api/v1/stats/same%20second/count', { json: { count: 1, t: tt }, bearer: key })
    t.is(res.status, 200)
  }
  for (let i = 0; i < 3; i++)
    await request(app.url, '/api/v1/stats/same%20gauge/value', { json: { value: [2, 4, 9][i], t: tt }, bearer: key })
  await settle(app)
  const [{ n }] = await app.sql<{ n: number }[]>`
    select count(*)::int as n from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${user.accountId} and s.name = 'same second'`
  t.is(n, 5)
  for (const range of Object.keys(RANGES)) {
    const res = await detail(key, 'same second', `?range=${range}`)
    const b = RANGES[range].bucket
    t.deepEqual(res.body.points, [{ t: Math.floor(tt / b) * b, value: 5, n: 5 }], range)
    const g = await detail(key, 'same gauge', `?range=${range}`)
    t.deepEqual(g.body.points, [{ t: Math.floor(tt / b) * b, value: 5, min: 2, max: 9, n: 3 }], range)
  }
  await refreshRollups(app.sql)
  t.deepEqual((await detail(key, 'same second', '?range=90d')).body.points, [{ t: Math.floor(tt / DAY) * DAY, value: 5, n: 5 }])
})

// ---------------------------------------------------------------- rollups
// refreshRollups() folds every stat's pending rows, so the tests that call it run
// serially (ava runs serial tests alone) and a read "straight after settle" really
// comes from rollup_pending.

/** Whether this database uses the TimescaleDB storage path (rollups_1m is then a view). */
async function timescale(): Promise<boolean> {
  const [r] = await app.sql<
    { view: boolean }[]
  >`select coalesce((select relkind = 'v' from pg_class where oid = to_regclass('rollups_1m')), false) as view`
  return r.view
}

async function pendingRows(statName: string, accountId: string): Promise<{ pending: number; m: number; h: number; d: number }> {
  const [r] = await app.sql<{ pending: number; m: number; h: number; d: number }[]>`
    select (select count(*) from rollup_pending p where p.stat_id = s.id)::int as pending,
           (select count(*) from rollups_1m r where r.stat_id = s.id)::int as m,
           (select count(*) from rollups_1h r where r.stat_id = s.id)::int as h,
           (select count(*) from rollups_1d r where r.stat_id = s.id)::int as d
    from stats s where s.account_id = ${accountId} and s.name = ${statName}`
  return r
}

test.serial(
  'results are identical before and after refreshRollups (1h on the 1 m table, 6h and 24h on 5 min, 7d on 1 h, 90d on 1 d), for every range',
  async (t) => {
    const { user, key } = await keyed()
    const now = nowS()
    const counter = spread(now, 'rolled counter', 'counter')
    const gauge = spread(now, 'rolled gauge', 'gauge')
    await write(key, [...counter, ...gauge])

    // Straight after settle: everything is in rollup_pending (plain PostgreSQL path; on TimescaleDB the
    // rollups are real-time continuous aggregates and there is no "not folded yet" state to check).
    const plain = !(await timescale())
    const state = await pendingRows('rolled counter', user.accountId)
    if (plain) {
      t.true(state.pending > 0)
      t.deepEqual([state.m, state.h, state.d], [0, 0, 0], 'not folded yet: the reads below come from rollup_pending')
    }
    const beforeC = await checkAllRanges(t, key, 'rolled counter', 'counter', counter, 'pending')
    const beforeG = await checkAllRanges(t, key, 'rolled gauge', 'gauge', gauge, 'pending')

    await refreshRollups(app.sql)
    const folded = await pendingRows('rolled counter', user.accountId)
    if (plain) t.is(folded.pending, 0)
    t.true(folded.m > 0 && folded.h > 0 && folded.d > 0, 'now read from the rollup tables')
    const afterC = await checkAllRanges(t, key, 'rolled counter', 'counter', counter, 'rollups')
    const afterG = await checkAllRanges(t, key, 'rolled gauge', 'gauge', gauge, 'rollups')
    t.deepEqual(afterC, beforeC)
    t.deepEqual(afterG, beforeG)
  },
)

test.serial('a bucket half in the rollup tables and half in rollup_pending reads as one bucket', async (t) => {
  const { key } = await keyed()
  const base = Math.floor((nowS() - 3 * DAY) / DAY) * DAY + 12 * HOUR
  await write(key, [
    { stat: 'mixed', t: base + 10, count: 1 },
    { stat: 'mixg', t: base + 10, value: 2 },
  ])
  await refreshRollups(app.sql)
  await write(key, [
    { stat: 'mixed', t: base + 20, count: 2 },
    { stat: 'mixed', t: base + 2 * HOUR, count: 4 },
    { stat: 'mixg', t: base + 20, value: 10 },
  ])
  const check = async (label: string) => {
    t.deepEqual(
      (await detail(key, 'mixed', '?range=7d')).body.points,
      [
        { t: base, value: 3, n: 2 },
        { t: base + 2 * HOUR, value: 4, n: 1 },
      ],
      label,
    )
    t.deepEqual((await detail(key, 'mixed', '?range=90d')).body.points, [{ t: base - 12 * HOUR, value: 7, n: 3 }], label)
    t.deepEqual((await detail(key, 'mixg', '?range=90d')).body.points, [{ t: base - 12 * HOUR, value: 6, min: 2, max: 10, n: 2 }], label)
  }
  await check('mixed')
  await refreshRollups(app.sql)
  await check('all folded')
})

test.serial(
  'a from/to window ending inside an hour reads the same before and after refreshRollups (7d-sized bucket on the 1 h table)',
  async (t) => {
    const { key } = await keyed()
    const h = Math.floor((nowS() - 5 * HOUR) / HOUR) * HOUR
    const points: Point[] = [
      { stat: 'edge', t: h + 10 * MIN, count: 1 },
      { stat: 'edge', t: h + 45 * MIN, count: 10 },
    ]
    await write(key, points)
    const iso = (s: number) => new Date(s * 1000).toISOString()
    const q = `?from=${enc(iso(h - DAY))}&to=${enc(iso(h + 30 * MIN))}` // a span over 24 h: 1 h buckets, read from rollups_1h once folded
    const before = await detail(key, 'edge', q)
    t.is(before.body.range.bucket_seconds, 3_600)
    t.deepEqual(before.body.points, [{ t: h, value: 1, n: 1 }], 'only the point before `to`')
    await refreshRollups(app.sql)
    const after = await detail(key, 'edge', q)
    t.deepEqual(after.body.points, before.body.points, 'the point after `to` must not appear once folded into the hour')
  },
)

test.serial(
  'a point with t a few minutes ahead (accepted up to 5 min) reads the same before and after refreshRollups on every range',
  async (t) => {
    const { key } = await keyed()
    // (Within the last 4 minutes of an hour, or a day, the point falls in the next bucket and the check is trivially true.)
    const tt = nowS() + 4 * MIN
    await write(key, [
      { stat: 'ahead', t: tt, count: 1 },
      { stat: 'ahead', t: nowS() - 10 * MIN, count: 2 },
    ])
    const before: Record<string, unknown> = {}
    for (const range of Object.keys(RANGES)) before[range] = (await detail(key, 'ahead', `?range=${range}`)).body.points
    await refreshRollups(app.sql)
    for (const range of Object.keys(RANGES)) t.deepEqual((await detail(key, 'ahead', `?range=${range}`)).body.points, before[range], range)
  },
)

test.serial(
  "a stat's chart read in one statement is, byte for byte, what the stat, series and bucket reads answer, for every range and a custom window, pending and folded",
  async (t) => {
    const { user, key } = await keyed()
    const now = nowS()
    // Values whose sums come out differently when added in another order, many to a bucket at every bucket size
    // (dense over the last 16 hours, sparse over 200 days); a stat with tagged series beside untagged ones.
    const points: Point[] = []
    for (let i = 0; i < 1_500; i++) {
      const ago = i < 1_000 ? i * 57 + 3 : 57_000 + (i - 1_000) * 34_567
      const v = ((i * 7_919) % 1_000) / 7
      points.push(
        { stat: 'one gauge', t: now - ago, value: v },
        { stat: 'one counter', t: now - ago, count: 0.1 * ((i % 9) + 1) },
        { stat: 'tagged', t: now - ago, value: v / 3, ...(i % 3 ? { tags: { host: i % 3 === 1 ? 'a' : 'b' } } : {}) },
      )
    }
    await write(key, points)
    const windows = [
      ...Object.keys(RANGES).map((range) => ({ range })),
      { from: new Date((now - 2 * DAY) * 1000).toISOString(), to: new Date((now - 17 * MIN) * 1000).toISOString() },
    ]
    const compare = async (label: string) => {
      const at = new Date()
      for (const q of windows) {
        const w = clampToRetention(resolveWindow(q, at), planOf('pro').retentionDays, at)
        for (const name of ['one gauge', 'one counter', 'tagged']) {
          const stat = (await findStatByRawName(app.sql, user.accountId, name))!
          const ids = (await listSeries(app.sql, stat)).map((s) => s.id)
          const before = { stat: statJson(stat), range: windowJson(w), points: await readBuckets(app.sql, ids, stat.kind, w) }
          const chart = (await readStatChart(app.sql, user.accountId, name, w))!
          const after = { stat: statJson(chart.stat), range: windowJson(w), points: chart.points }
          t.true(before.points.length > 0, `${label} ${name} ${JSON.stringify(q)}: something to compare`)
          t.is(JSON.stringify(after), JSON.stringify(before), `${label} ${name} ${JSON.stringify(q)}`)
        }
      }
      t.is(await readStatChart(app.sql, user.accountId, 'never written', clampToRetention(resolveWindow({}, at), 400, at)), null)
      // Through the route: the same bytes as the reads one after another, on a fixed window.
      const q = windows[windows.length - 1] as { from: string; to: string }
      const w = clampToRetention(resolveWindow(q, at), planOf('pro').retentionDays, at)
      const stat = (await findStatByRawName(app.sql, user.accountId, 'one gauge'))!
      const res = await detail(key, 'one gauge', `?from=${enc(q.from)}&to=${enc(q.to)}`)
      t.is(
        res.text,
        JSON.stringify({ stat: statJson(stat), range: windowJson(w), points: await readBuckets(app.sql, stat.id, stat.kind, w) }),
      )
    }
    await compare('pending')
    await refreshRollups(app.sql)
    await compare('folded')
    // An unknown stat is a 404 before a bad window is a 400, as before the read was one statement.
    t.is((await detail(key, 'never written', '?range=2h')).status, 404)
    t.is((await detail(key, 'one gauge', '?range=2h')).status, 400)
  },
)
