// Percentiles of gauges (docs/decisions.md §20) through a listening server on real PostgreSQL and Redis:
// GET /api/v1/stats/:name?percentiles=50,95,99 against exact nearest-rank percentiles of the points
// written, over every range of docs/decisions.md §6, before the sketches are built (raw points) and after (hour and
// day sketches), on log-normal, bimodal and normal data; the 400s; every write route feeding the sketches.
import test from 'ava'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { Sketch } from '../../shared/points/sketches.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { pauseRollups, settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })
test.before(async () => {
  // The scheduled refresh is paused: each test decides when sketches are built.
  await pauseRollups(app)
})

const HOUR = 3_600
const DAY = 86_400
const RANGES = ['1h', '6h', '24h', '7d', '30d', '90d', '180d']
// A value on a bin edge is off by exactly the sketch's 1 %; 1e-12 leaves room for floating-point rounding there.
const PS = [50, 95, 99]

/** A seeded generator, so a failure can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = s
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform())
  return { uniform, normal }
}

const DISTRIBUTIONS: Record<string, (r: ReturnType<typeof rng>) => number> = {
  // Latency-like: median 50 ms, long right tail.
  lognormal: (r) => Math.round(Math.exp(Math.log(50) + 0.8 * r.normal()) * 1000) / 1000,
  // Two modes far apart (cache hits and misses): 70 % near 10, 30 % near 1,000.
  bimodal: (r) => Math.round((r.uniform() < 0.7 ? 10 + r.normal() : 1000 + 50 * r.normal()) * 1000) / 1000,
  normal: (r) => Math.round((100 + 15 * r.normal()) * 1000) / 1000,
}

/** Points over 181 days: one every 20 minutes, every 2 minutes in the last day, every 10 s in the last hour. */
function series(name: string, seed: number, now: number): Array<{ t: number; value: number }> {
  const r = rng(seed)
  const gen = DISTRIBUTIONS[name]
  const out: Array<{ t: number; value: number }> = []
  for (let t = now - 181 * DAY; t < now - DAY; t += 1_200) out.push({ t, value: gen(r) })
  for (let t = now - DAY; t < now - HOUR; t += 120) out.push({ t, value: gen(r) })
  for (let t = now - HOUR; t <= now; t += 10) out.push({ t, value: gen(r) })
  return out
}

/** Nearest rank: the value of rank ceil(q·n) (at least 1) in ascending order. */
function nearestRank(sorted: number[], p: number): number {
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length - 1e-9)) - 1]
}

async function account(): Promise<string> {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  return (await createKey(app.url, user)).key
}

async function write(key: string, points: Array<{ stat: string; t: number; value: number }>): Promise<void> {
  for (let i = 0; i < points.length; i += 1000) {
    const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points: points.slice(i, i + 1000) } })
    if (res.status !== 200) throw new Error(`write failed: ${res.status} ${res.text}`)
  }
  await settle(app)
}

interface Point {
  t: number
  n: number
  value: number
  min: number
  max: number
  [p: string]: number
}

/** Every bucket of every range: the largest relative error of p50/p95/p99 against the exact values. */
async function worstError(
  key: string,
  stat: string,
  points: Array<{ t: number; value: number }>,
): Promise<{ worst: number; where: string; buckets: number }> {
  let worst = 0
  let where = ''
  let buckets = 0
  for (const range of RANGES) {
    const res = await request(app.url, `/api/v1/stats/${stat}?range=${range}&percentiles=${PS.join(',')}`, { bearer: key })
    if (res.status !== 200) throw new Error(`${range}: ${res.status} ${res.text}`)
    const body = res.body as { range: { from: string; to: string; bucket_seconds: number }; points: Point[] }
    const from = Date.parse(body.range.from) / 1000
    const to = Date.parse(body.range.to) / 1000
    const size = body.range.bucket_seconds
    const exact = new Map<number, number[]>()
    for (const p of points) {
      if (p.t < from || p.t >= to) continue
      const t = Math.floor(p.t / size) * size
      if (!exact.has(t)) exact.set(t, [])
      exact.get(t)!.push(p.value)
    }
    if (body.points.length !== exact.size) throw new Error(`${range}: ${body.points.length} buckets, expected ${exact.size}`)
    for (const b of body.points) {
      const values = exact.get(b.t)!.sort((x, y) => x - y)
      if (b.n !== values.length) throw new Error(`${range} bucket ${b.t}: n ${b.n}, expected ${values.length}`)
      for (const p of PS) {
        const want = nearestRank(values, p)
        const err = Math.abs(b[`p${p}`] - want) / Math.abs(want)
        if (!(err <= worst)) {
          worst = err
          where = `${range} bucket ${new Date(b.t * 1000).toISOString()} p${p}: ${b[`p${p}`]} vs exact ${want} (n ${values.length})`
        }
      }
      buckets++
    }
  }
  return { worst, where, buckets }
}

for (const [i, name] of Object.keys(DISTRIBUTIONS).entries()) {
  test.serial(`${name}: p50/p95/p99 within 1 % of exact nearest-rank over every range, from raw points and from sketches`, async (t) => {
    const key = await account()
    const now = Math.floor(Date.now() / 1000)
    const stat = `latency.${name}`
    const points = series(name, 1000 + i, now)
    await write(
      key,
      points.map((p) => ({ stat, ...p })),
    )

    // Before any refresh: every hour is pending, so all of it is read raw.
    const before = await worstError(key, stat, points)
    t.true(before.worst <= 0.01 + 1e-12, `before the refresh: ${(before.worst * 100).toFixed(3)} % at ${before.where}`)

    await refreshRollups(app.sql)
    const [{ hours, sixes, days }] = await app.sql<{ hours: number; sixes: number; days: number }[]>`
      select (select count(*) from sketches_1h h join stats s on s.id = h.stat_id where s.name = ${stat})::int as hours,
             (select count(*) from sketches_6h x join stats s on s.id = x.stat_id where s.name = ${stat})::int as sixes,
             (select count(*) from sketches_1d d join stats s on s.id = d.stat_id where s.name = ${stat})::int as days`
    t.true(hours >= 180 * 24, `hour sketches built (${hours})`)
    t.true(sixes >= 180 * 4, `6-hour sketches built (${sixes})`)
    t.true(days >= 180, `day sketches built (${days})`)
    const after = await worstError(key, stat, points)
    t.true(after.worst <= 0.01 + 1e-12, `from sketches: ${(after.worst * 100).toFixed(3)} % at ${after.where}`)
    t.log(
      `${name}: worst relative error ${(before.worst * 100).toFixed(3)} % raw, ${(after.worst * 100).toFixed(3)} % with sketches over ${after.buckets} buckets`,
    )

    // Late points into 25 sketched hours, every other hour: each is read raw until the next refresh rebuilds it
    // (more than 20 separate hours: the read's single-scan form), and counts at once.
    const late = Array.from({ length: 25 }, (_, k) => ({ t: now - 40 * DAY + k * 2 * HOUR + 17, value: 1e6 }))
    points.push(...late)
    await write(
      key,
      late.map((p) => ({ stat, ...p })),
    )
    const pending = await worstError(key, stat, points)
    t.true(pending.worst <= 0.01 + 1e-12, `late point, not yet refreshed: ${(pending.worst * 100).toFixed(3)} % at ${pending.where}`)
    await refreshRollups(app.sql)
    const rebuilt = await worstError(key, stat, points)
    t.true(rebuilt.worst <= 0.01 + 1e-12, `late point, rebuilt: ${(rebuilt.worst * 100).toFixed(3)} % at ${rebuilt.where}`)
  })
}

test.serial('percentiles: a counter, a value out of 0..100, a non-number or too many are 400s naming the problem', async (t) => {
  const key = await account()
  await write(key, [{ stat: 'gauge.a', t: Math.floor(Date.now() / 1000), value: 1 }])
  const c = await request(app.url, '/api/v1/points', { bearer: key, json: { points: [{ stat: 'hits', count: 1 }] } })
  t.is(c.status, 200)
  await settle(app)
  const bad: Array<[string, string, RegExp]> = [
    ['hits', '50', /only gauges have percentiles/],
    ['gauge.a', '101', /numbers from 0 to 100/],
    ['gauge.a', '-1', /numbers from 0 to 100/],
    ['gauge.a', 'p95', /numbers from 0 to 100/],
    ['gauge.a', '50,,95', /numbers from 0 to 100/],
    ['gauge.a', '', /numbers from 0 to 100/],
    ['gauge.a', '1,2,3,4,5,6,7,8,9,10,11', /at most 10/],
  ]
  for (const [stat, q, message] of bad) {
    const res = await request(app.url, `/api/v1/stats/${stat}?range=1h&percentiles=${encodeURIComponent(q)}`, { bearer: key })
    t.is(res.status, 400, `${stat} ${q}`)
    t.regex(res.text, message, `${stat} ${q}`)
  }
  const ok = await request(app.url, '/api/v1/stats/gauge.a?range=1h&percentiles=0,99.9,100', { bearer: key })
  t.is(ok.status, 200)
  const [p] = (ok.body as { points: Point[] }).points
  t.deepEqual([p.p0, p['p99.9'], p.p100], [1, 1, 1])
  // Without the parameter the points are as before.
  const plain = await request(app.url, '/api/v1/stats/gauge.a?range=1h', { bearer: key })
  t.deepEqual(Object.keys((plain.body as { points: Point[] }).points[0]).sort(), ['max', 'min', 'n', 't', 'value'])
})

test.serial('every write route feeds the sketches: /ez, /ez batch, /v, v1 value, v1 points', async (t) => {
  const key = await account()
  const t0 = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 5 * HOUR // a complete hour
  const ok = (r: { status: number; text: string }) => t.true(r.status === 200 || r.status === 201, r.text)
  ok(await request(app.url, '/ez', { json: { ezkey: key, stat: 'via.routes', value: 1, t: t0 + 1 } }))
  ok(
    await request(app.url, '/ez', {
      json: {
        ezkey: key,
        data: [
          { stat: 'via.routes', value: 2, t: String(t0 + 2) },
          { stat: 'via.routes', value: 3, t: String(t0 + 3) },
        ],
      },
    }),
  )
  ok(await request(app.url, '/v', { form: `ukey=${key}&key=via.routes&value=4&t=${t0 + 4}` }))
  ok(await request(app.url, '/api/v1/stats/via.routes/value', { bearer: key, json: { value: 5, t: t0 + 5 } }))
  ok(await request(app.url, '/api/v1/points', { bearer: key, json: { points: [{ stat: 'via.routes', value: 6, t: t0 + 6 }] } }))
  await settle(app)
  await refreshRollups(app.sql)
  const rows = await app.sql<{ sketch: Uint8Array }[]>`
    select h.sketch from sketches_1h h join stats s on s.id = h.stat_id where s.name = 'via.routes' and h.bucket = to_timestamp(${t0})`
  t.is(rows.length, 1)
  const s = Sketch.decode(rows[0].sketch)
  t.is(s.count, 6)
  t.true(Math.abs(s.quantile(0.5)! - 3) / 3 <= 0.01)
  // The library reads the same bins (its rank is q·(n−1): its median of 1..6 lies in 3 or 4).
  const d = s.toDDSketch()
  t.is(d.count, 6)
})

test('sketch encoding: round trip keeps every bin; merged sketches equal one sketch over all values', (t) => {
  const r = rng(7)
  const whole = new Sketch()
  const parts = [new Sketch(), new Sketch(), new Sketch()]
  for (let i = 0; i < 30_000; i++) {
    const v = i % 97 === 0 ? 0 : i % 89 === 0 ? -Math.exp(r.normal()) : Math.exp(3 + r.normal())
    whole.accept(v)
    parts[i % 3].accept(v)
  }
  const merged = new Sketch()
  for (const p of parts) merged.merge(Sketch.decode(p.encode()))
  const bins = (s: Sketch) => ({ pos: s.pos.entries(), neg: s.neg.entries(), zero: s.zero, count: s.count })
  t.deepEqual(bins(Sketch.decode(whole.encode())), bins(whole))
  t.deepEqual(bins(merged), bins(whole))
  t.is(merged.count, whole.count)
  for (const q of [0, 0.01, 0.5, 0.95, 0.99, 1]) t.is(merged.quantile(q), whole.quantile(q))
  t.throws(() => Sketch.decode(Buffer.from([9, 0, 0, 0])), { message: /version 9/ })
})
