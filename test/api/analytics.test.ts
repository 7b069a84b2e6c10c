// GET /api/v1/correlations and /api/v1/thresholds/suggest end to end: seeded
// series in a real database, read through a real server with real keys.
import test from 'ava'
import { randomUUID } from 'node:crypto'
import type { QueuedPoint } from '../../shared/jobs.js'
import { applyBatch } from '../../shared/points/repo.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

const app = appSuite()
let owner: User
let key: string
let otherKey: string
const HOUR = 3600
const NOW = Math.floor(Date.now() / 1000)
const thisHour = Math.floor(NOW / HOUR) * HOUR
const thisMinute = Math.floor(NOW / 60) * 60

/** A deterministic random walk of n steps. */
function walk(seed: number, n: number): number[] {
  let s = seed >>> 0
  const rand = () => (s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0) / 4_294_967_296
  const out = [100]
  for (let i = 1; i < n; i++) out.push(out[i - 1] + rand() - 0.5)
  return out
}

async function statWith(
  accountId: string,
  name: string,
  kind: 'counter' | 'gauge',
  points: Array<[number, number]>,
  createdAt = new Date((NOW - 60 * 86_400) * 1000),
) {
  const [s] = await app.sql<{ id: string }[]>`
    insert into stats (account_id, name, kind, created_at) values (${accountId}, ${name}, ${kind}, ${createdAt}) returning id`
  if (points.length)
    await applyBatch(
      app.sql,
      randomUUID(),
      points.map(([ts, v]): QueuedPoint => [s.id, ts, v, null]),
    )
  return s.id
}

const HOURS = 192
/** One point in each of the last HOURS complete hours, half past. */
const hourly = (values: number[]) => values.map((v, h): [number, number] => [thisHour - (HOURS - h) * HOUR + 1800, v])

test.before(async () => {
  owner = await signUp(app.url)
  key = (await createKey(app.url, owner)).key
  const cpu = walk(1, HOURS + 3)
  const target = cpu.slice(3)
  await statWith(owner.accountId, 'cpu', 'gauge', hourly(target))
  await statWith(owner.accountId, 'cpu.scaled', 'gauge', hourly(target.map((v) => 3 * v + 7)))
  await statWith(owner.accountId, 'requests', 'counter', hourly(target.map((v) => Math.round(40 * v))))
  await statWith(owner.accountId, 'noise', 'gauge', hourly(walk(99, HOURS)))
  await statWith(owner.accountId, 'cpu.delayed', 'gauge', hourly(cpu.slice(0, HOURS))) // hour h shows what cpu showed at h - 3
  await statWith(owner.accountId, 'sparse', 'gauge', hourly(target).slice(-10))
  await statWith(owner.accountId, 'dead', 'gauge', [
    [NOW - 20 * 86_400, 1],
    [NOW - 20 * 86_400 + 3600, 2],
  ])
  await statWith(owner.accountId, 'flat', 'gauge', hourly(target.map(() => 5)))
  // Per-minute latency over the last two days: 100-106 with three spikes, so the back-test counts are known.
  const minutes = 2 * 1440
  const latency = Array.from({ length: minutes }, (_, m): [number, number] => {
    const spike = [1000, 1001, 1002].includes(m) ? 500 : [1020, 1021].includes(m) ? 400 : m === 2000 ? 300 : 0
    return [thisMinute - (minutes - m) * 60 + 30, spike || 100 + (m % 7)]
  })
  await statWith(owner.accountId, 'latency', 'gauge', latency)
  await statWith(owner.accountId, 'fresh', 'gauge', latency.slice(-60), new Date((thisMinute - 3600) * 1000))

  // Another account with stats of the same names: never compared, never visible.
  const other = await signUp(app.url)
  otherKey = (await createKey(app.url, other)).key
  await statWith(other.accountId, 'cpu', 'gauge', hourly(target))
  await statWith(other.accountId, 'cpu.copy', 'gauge', hourly(target))
})

const get = (path: string, bearer = key) => request(app.url, path, { bearer })

test('4.8 correlations: a scaled copy and a derived counter rank first near 1, an independent walk near 0, the window is complete hours', async (t) => {
  const res = await get('/api/v1/correlations?stat=cpu')
  t.is(res.status, 200, res.text)
  const b = res.body
  t.like(b, { target: 'cpu', target_kind: 'gauge', target_n: 167 })
  t.deepEqual(b.window, {
    from: new Date((thisHour - 168 * HOUR) * 1000).toISOString(),
    to: new Date(thisHour * 1000).toISOString(),
    bucket_seconds: 3600,
  })
  t.like(b, { method: 'departures', transform: 'diff', max_lag: 0 })
  t.deepEqual(
    b.results.slice(0, 2).map((r: any) => r.stat_name),
    ['cpu.scaled', 'requests'],
  )
  t.like(b.results[0], { kind: 'gauge', coefficient: 1, lag_buckets: 0, n: 167 })
  t.true(b.results[1].coefficient > 0.95)
  const noise = b.results.find((r: any) => r.stat_name === 'noise')
  t.true(Math.abs(noise.coefficient) < 0.25, `noise: ${noise.coefficient}`)
  const names = [...b.results, ...b.excluded].map((r: any) => r.stat_name)
  t.false(names.includes('cpu'), 'the target is not compared with itself')
  t.false(names.includes('cpu.copy'), "another account's stats are never compared")
  const abs = b.results.map((r: any) => Math.abs(r.coefficient))
  t.deepEqual(
    abs,
    [...abs].sort((x: number, y: number) => y - x),
    'strongest first',
  )
  t.true(b.omitted.some((o: string) => o.includes('not causation')))
  t.true(
    b.omitted.some((o: string) =>
      /with 167 hourly values, unrelated stats reach \|coefficient\| > 0\.15\d* in about 1 comparison of 20/.test(o),
    ),
  )
})

test('4.8 correlations: stats with too few overlapping hours, no data or no variation are excluded with the reason', async (t) => {
  const b = (await get('/api/v1/correlations?stat=cpu')).body
  const excluded = Object.fromEntries(b.excluded.map((e: any) => [e.stat_name, e]))
  t.like(excluded.sparse, { reason: 'short', detail: 'only 9 overlapping hours with the target (24 needed)' })
  t.like(excluded.dead, { reason: 'no_data', detail: 'no data in the window' })
  t.like(excluded.flat, { reason: 'constant', detail: 'no variation over the 167 overlapping hours' })
  t.is(b.results.length + b.excluded.length, 9, 'every other stat of the account is either a result or excluded')
})

test('4.8 correlations: the lag search finds a delayed copy 3 hours behind (the target moves first), invisible without it', async (t) => {
  const lagged = (await get('/api/v1/correlations?stat=cpu&max_lag=6&method=pearson')).body
  const delayed = lagged.results.find((r: any) => r.stat_name === 'cpu.delayed')
  t.like(delayed, { lag_buckets: -3, n: 164 })
  t.true(delayed.coefficient > 0.999)
  t.like(lagged, { method: 'pearson', max_lag: 6 })
  const plain = (await get('/api/v1/correlations?stat=cpu')).body.results.find((r: any) => r.stat_name === 'cpu.delayed')
  t.true(Math.abs(plain.coefficient) < 0.3)
  const fromDelayed = (await get('/api/v1/correlations?stat=cpu.delayed&max_lag=6')).body.results.find((r: any) => r.stat_name === 'cpu')
  t.is(fromDelayed.lag_buckets, 3, 'seen from the follower, cpu moves first')
})

test('4.8 correlations: transform=none correlates levels; a range the diff cannot fill says so; retention clamps the window', async (t) => {
  const levels = (await get('/api/v1/correlations?stat=cpu&transform=none')).body
  t.like(levels, { transform: 'none', target_n: 168 })
  t.like(levels.results[0], { stat_name: 'cpu.scaled', coefficient: 1, n: 168 })
  const day = (await get('/api/v1/correlations?stat=cpu&range=24h')).body
  t.deepEqual(day.results, [])
  t.true(day.omitted.some((o: string) => o.includes('only 23 usable hourly values') && o.includes('choose a longer range')))
  const long = (await get('/api/v1/correlations?stat=cpu&range=90d')).body
  t.true(
    long.omitted.some((o: string) => o.includes('30-day retention')),
    'a free account keeps 30 days',
  )
  t.is(long.window.from, new Date(Math.ceil((NOW - 30 * 86_400) / HOUR) * HOUR * 1000).toISOString())
})

test('4.8 thresholds: a given threshold is back-tested with counts derived by hand: separate breaches fire, a cooldown swallows the close one', async (t) => {
  const res = await get('/api/v1/thresholds/suggest?stat=latency&threshold=200')
  t.is(res.status, 200, res.text)
  t.like(res.body, { stat: 'latency', kind: 'gauge', condition_type: 'above', cooldown_minutes: 0 })
  t.like(res.body.suggestions[0], { threshold: 200, would_have_fired: 3, minutes_in_breach: 6, suppressed_by_cooldown: 0 })
  t.deepEqual(
    res.body.suggestions[0].incidents.map((i: any) => [i.peak, i.notified]),
    [
      [500, true],
      [400, true],
      [300, true],
    ],
  )
  const firstSpike = thisMinute - (2880 - 1000) * 60
  t.like(res.body.suggestions[0].incidents[0], {
    started_at: new Date((firstSpike + 60) * 1000).toISOString(),
    ended_at: new Date((firstSpike + 240) * 1000).toISOString(),
  })
  const cooled = (await get('/api/v1/thresholds/suggest?stat=latency&threshold=200&cooldown_minutes=30')).body.suggestions[0]
  t.like(cooled, { would_have_fired: 2, minutes_in_breach: 6, suppressed_by_cooldown: 1 })
  t.deepEqual(
    cooled.incidents.map((i: any) => i.notified),
    [true, false, true],
  )
  const high = (await get('/api/v1/thresholds/suggest?stat=latency&threshold=450')).body.suggestions[0]
  t.like(high, { would_have_fired: 1, minutes_in_breach: 3 })
  t.true(high.quantile > 0.998 && high.quantile < 1)
})

test('4.8 thresholds: suggestions come from the per-minute distribution, two significant figures, each with its back-test; the basis is stated', async (t) => {
  const b = (await get('/api/v1/thresholds/suggest?stat=latency')).body
  t.like(b.basis, { evaluations: 30 * 1440, minutes_with_value: 2880 })
  t.regex(b.basis.value_definition, /average of the gauge over each whole UTC minute/)
  t.like(b.distribution, { min: 100, max: 500 })
  t.true(b.distribution.p50 >= 100 && b.distribution.p99 <= 106)
  t.true(b.suggestions.length >= 2)
  for (const s of b.suggestions) t.is(Number(s.threshold.toPrecision(2)), s.threshold)
  t.deepEqual(
    b.suggestions.map((s: any) => s.quantile),
    [...b.suggestions.map((s: any) => s.quantile)].sort(),
  )
  t.like(b.suggestions[0], { threshold: 110, quantile: 0.95, would_have_fired: 3, minutes_in_breach: 6 })
  // The highest suggestion is one step inside the maximum, never the maximum itself (above is
  // strict: 500 would have fired 0 times on the spike of 500); each says how many of the largest minutes it catches.
  t.like(b.suggestions.at(-1), { threshold: 490, quantile: 1, would_have_fired: 1, catches_largest: 3 })
  t.true(b.suggestions.every((s: any) => s.threshold < b.distribution.max))
  t.deepEqual(
    b.largest_minutes.map((m: any) => m.value),
    [500, 500, 500],
  )
  // The spikes' points lie 30 s into minutes 1000-1002; each is named by the minute that holds it.
  const spikeMinutes = [1000, 1001, 1002].map((m) => new Date((thisMinute - (2 * 1440 - m) * 60) * 1000).toISOString())
  t.deepEqual([...b.largest_minutes.map((m: any) => m.at)].sort(), spikeMinutes)
  t.true(b.warnings.some((w: string) => w.includes('only 2 days of data')))
  // Two days of minutes at the end of a 30-day lookback: 2 of its 24-hour days (3 when they straddle a third).
  t.true(
    b.warnings.some((w: string) => /^[23] of 30 days have data: the suggestions are drawn from those days only$/.test(w)),
    JSON.stringify(b.warnings),
  )
  const below = (await get('/api/v1/thresholds/suggest?stat=latency&condition_type=below&lookback=7d')).body
  t.like(below, { condition_type: 'below' })
  // Every low quantile is 100 (a seventh of the minutes read exactly 100): a threshold of 100 would catch nothing
  // (below is strict) and one over it would fire most minutes, so none is suggested, and the answer says why.
  t.deepEqual(below.suggestions, [])
  t.true(
    below.warnings.includes(
      'the smallest value, 100, is also a common one: no threshold over it would fire only on rare minutes, so none is suggested',
    ),
    JSON.stringify(below.warnings),
  )
})

test('4.8 thresholds: a stat created inside the lookback and a lookback past retention are warned about', async (t) => {
  const b = (await get('/api/v1/thresholds/suggest?stat=fresh&lookback=90d')).body
  t.true(b.warnings.some((w: string) => w.includes('created at') && w.includes('inside the lookback')))
  t.true(b.warnings.some((w: string) => w.includes('back-tested the last 30 days')))
  t.is(b.basis.evaluations, 30 * 1440)
})

test('4.8 both read with a dashboard session too', async (t) => {
  const c = await request(app.url, '/api/v1/correlations?stat=cpu', { session: owner.session })
  t.is(c.status, 200)
  const s = await request(app.url, '/api/v1/thresholds/suggest?stat=latency', { session: owner.session })
  t.is(s.status, 200)
})

const problem = (res: { status: number; body: any; headers: Headers }, status: number, code: string, detail: string | RegExp) => ({
  status: res.status,
  code: res.body?.code,
  detailOk: typeof detail === 'string' ? res.body?.detail === detail : detail.test(res.body?.detail ?? ''),
  type: res.headers.get('content-type')?.split(';')[0],
  expect: { status, code, detail: String(detail) },
  got: res.body?.detail,
})

for (const [path, status, code, detail] of [
  ['/api/v1/correlations', 400, 'validation_failed', 'query.stat: required'],
  ['/api/v1/correlations?stat=', 400, 'validation_failed', 'query.stat: required'],
  ['/api/v1/correlations?stat=cpu&stat=noise', 400, 'validation_failed', 'query.stat: given more than once'],
  ['/api/v1/correlations?stat=nope', 404, 'stat_not_found', 'stat not found'],
  ['/api/v1/correlations?stat=cpu.copy', 404, 'stat_not_found', 'stat not found'],
  ['/api/v1/correlations?stat=cpu&method=kendall', 400, 'validation_failed', 'query.method: must be one of spearman, pearson, departures'],
  ['/api/v1/correlations?stat=cpu&transform=log', 400, 'validation_failed', 'query.transform: must be one of diff, none'],
  ['/api/v1/correlations?stat=cpu&range=2d', 400, 'validation_failed', 'query.range: must be one of 1h, 6h, 24h, 7d, 30d, 90d, 180d'],
  ['/api/v1/correlations?stat=cpu&max_lag=25', 400, 'validation_failed', 'query.max_lag: must be an integer from 0 to 24'],
  ['/api/v1/correlations?stat=cpu&max_lag=', 400, 'validation_failed', 'query.max_lag: must be an integer from 0 to 24'],
  ['/api/v1/correlations?stat=cpu&max_lag=1.5', 400, 'validation_failed', 'query.max_lag: must be an integer from 0 to 24'],
  ['/api/v1/thresholds/suggest', 400, 'validation_failed', 'query.stat: required'],
  ['/api/v1/thresholds/suggest?stat=nope', 404, 'stat_not_found', 'stat not found'],
  [
    '/api/v1/thresholds/suggest?stat=latency&condition_type=pct_change',
    400,
    'validation_failed',
    'query.condition_type: must be one of above, below',
  ],
  [
    '/api/v1/thresholds/suggest?stat=latency&lookback=1y',
    400,
    'validation_failed',
    'query.lookback: must be one of 1h, 6h, 24h, 7d, 30d, 90d, 180d',
  ],
  [
    '/api/v1/thresholds/suggest?stat=latency&cooldown_minutes=-1',
    400,
    'validation_failed',
    'query.cooldown_minutes: must be an integer from 0 to 10080',
  ],
  [
    '/api/v1/thresholds/suggest?stat=latency&threshold=0x10',
    400,
    'validation_failed',
    'query.threshold: must be a decimal number of magnitude at most 1000000000000000',
  ],
  [
    '/api/v1/thresholds/suggest?stat=latency&threshold=2e15',
    400,
    'validation_failed',
    'query.threshold: must be a decimal number of magnitude at most 1000000000000000',
  ],
  [
    '/api/v1/thresholds/suggest?stat=latency&threshold=',
    400,
    'validation_failed',
    'query.threshold: must be a decimal number of magnitude at most 1000000000000000',
  ],
] as const) {
  test(`4.8 ${path} -> ${status} ${detail}`, async (t) => {
    const before = await app.sql`select count(*)::int as n from stats`
    const res = await get(path)
    const p = problem(res, status, code, detail)
    t.deepEqual([p.status, p.code, p.detailOk, p.type], [status, code, true, 'application/problem+json'], `detail: ${p.got}`)
    t.deepEqual(await app.sql`select count(*)::int as n from stats`, before, 'a read stores nothing, rejected or not')
  })
}

test('5.2 the analytics reads need Bearer or session: no credentials, or ukey/ezkey in the query string, is a 401', async (t) => {
  for (const path of ['/api/v1/correlations?stat=cpu', '/api/v1/thresholds/suggest?stat=latency']) {
    t.is((await request(app.url, path)).status, 401)
    t.is((await request(app.url, `${path}&ukey=${key}`)).status, 401)
    t.is((await request(app.url, `${path}&ezkey=${key}`)).status, 401)
    t.is((await request(app.url, path, { bearer: 'not-a-key' })).status, 401)
  }
})

test("every query is scoped to the caller's account: the other account sees only its own stats", async (t) => {
  const res = await get('/api/v1/correlations?stat=cpu', otherKey)
  t.is(res.status, 200)
  t.deepEqual(
    [...res.body.results, ...res.body.excluded].map((r: any) => r.stat_name),
    ['cpu.copy'],
  )
  t.is((await get('/api/v1/thresholds/suggest?stat=latency', otherKey)).status, 404)
})

test('the OpenAPI document describes both routes from the schemas they validate with', async (t) => {
  const doc = (await request(app.url, '/api/v1/openapi.json')).body
  const corr = doc.paths['/api/v1/correlations'].get
  t.deepEqual(corr.parameters.map((p: any) => p.name).sort(), ['max_lag', 'method', 'range', 'stat', 'transform'])
  t.truthy(corr.responses['200'].content['application/json'].schema)
  t.truthy(corr.responses['404'])
  const sugg = doc.paths['/api/v1/thresholds/suggest'].get
  t.deepEqual(sugg.parameters.map((p: any) => p.name).sort(), [
    'aggregation',
    'condition_type',
    'cooldown_minutes',
    'lookback',
    'stat',
    'threshold',
    'window_minutes',
  ])
  t.truthy(doc.components.schemas.ThresholdSuggestions)
  t.truthy(doc.components.schemas.Correlations)
})
