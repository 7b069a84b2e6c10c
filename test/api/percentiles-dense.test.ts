// Chart buckets under an hour of a dense gauge come from minute sketches (sql/0034), within the
// sketch's 1 % of exact nearest-rank; sparse hours, the current hour and an hour with a late point not rebuilt yet
// are answered exactly from the raw points. Which source answered each bucket shows in its values: a sketched
// bucket's percentile is the value of a sketch bin (the same as a sketch built here from the bucket's points,
// clamped to its min and max), an exact one is a value that was written. Real PostgreSQL and Redis, points written
// through /api/v1/points, sketches built by the workers' refresh.
import test from 'ava'
import { MINUTE_SKETCH_MIN_POINTS, RELATIVE_ACCURACY, Sketch } from '../../shared/points/sketches.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { pauseRollups, settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const HOUR = 3_600
const PS = [1, 10, 25, 50, 75, 90, 95, 99, 99.9, 100]
const nearestRank = (sorted: number[], p: number) => sorted[Math.max(1, Math.ceil((p / 100) * sorted.length - 1e-9)) - 1]
/** A log-normal value with two decimals (median 50): values that fall between a sketch's bin values. */
const value = () =>
  Math.round(Math.exp(Math.log(50) + 0.8 * Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random())) * 100) / 100

async function write(key: string, points: Array<{ stat: string; t: number; value: number }>): Promise<void> {
  for (let i = 0; i < points.length; i += 1000) {
    const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points: points.slice(i, i + 1000) } })
    if (res.status !== 200) throw new Error(`write failed: ${res.status} ${res.text}`)
  }
  await settle(app)
}

async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (ok(v)) return v
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)} after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

type Bucket = { t: number; n: number; min: number; max: number } & Record<string, number>

test('24h percentiles of a dense gauge: minute sketches in dense hours (within 1 %), exact raw points elsewhere', async (t) => {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  const now = Math.floor(Date.now() / 1000)
  const current = Math.floor(now / HOUR) * HOUR
  const dense = [current - 3 * HOUR, current - 2 * HOUR]
  const sparse = current - 5 * HOUR
  const written: Array<{ stat: string; t: number; value: number }> = []
  // Two dense hours (a point every 0.9 s), a sparse hour (one every 30 s) and a few points of the current hour.
  for (const h of dense) for (let i = 0; i < 4_000; i++) written.push({ stat: 'dense.g', t: h + Math.floor(i * 0.9), value: value() })
  for (let i = 0; i < 120; i++) written.push({ stat: 'dense.g', t: sparse + i * 30, value: value() })
  for (let i = 0; i < 40; i++) written.push({ stat: 'dense.g', t: Math.min(now, current + i), value: value() })
  await write(key, written)
  const [{ id }] = await app.sql<{ id: string }[]>`select id from stats where account_id = ${user.accountId} and name = 'dense.g'`
  const built = await until(
    'the dense hours get minute sketches',
    async () =>
      (
        await app.sql<{ h: Date; n: number }[]>`
    select date_trunc('hour', bucket) as h, count(*)::int as n from sketches_1m where stat_id = ${id} group by 1 order by 1`
      ).map((r) => [r.h.getTime() / 1000, r.n]),
    (v) => v.length === 2,
  )
  t.deepEqual(
    built,
    dense.map((h) => [h, 60]),
    'a sketch for each minute of the two dense hours, none for the sparse hour',
  )
  const refreshed = () =>
    until(
      'the refresh done',
      async () =>
        (
          await app.sql<{ n: number }[]>`
    select ((select count(*) from rollup_pending where stat_id = ${id}) + (select count(*) from sketch_dirty where stat_id = ${id} and hour < date_trunc('hour', now())))::int as n`
        )[0].n,
      (n) => n === 0,
    )
  await refreshed()
  t.true(4_000 >= MINUTE_SKETCH_MIN_POINTS && 120 < MINUTE_SKETCH_MIN_POINTS)

  const read = async (): Promise<Bucket[]> => {
    const res = await request(app.url, `/api/v1/stats/dense.g?range=24h&percentiles=${PS.join(',')}`, { bearer: key })
    t.is(res.status, 200)
    return res.body.points.filter((b: Bucket) => b.n > 0)
  }
  const check = (buckets: Bucket[], sketched: (b: Bucket) => boolean, points: typeof written) => {
    let sketchedSeen = 0
    let exactSeen = 0
    for (const b of buckets) {
      const mine = points
        .filter((p) => p.t >= b.t && p.t < b.t + 900)
        .map((p) => p.value)
        .sort((x, y) => x - y)
      t.is(b.n, mine.length, `bucket ${b.t}: its points`)
      const sketch = new Sketch()
      for (const v of mine) sketch.accept(v)
      for (const p of PS) {
        const exact = nearestRank(mine, p)
        const got = b[`p${p}`]
        if (sketched(b)) {
          t.is(got, Math.min(b.max, Math.max(b.min, sketch.quantile(p / 100)!)), `bucket ${b.t} p${p}: the sketch's value`)
          t.true(Math.abs(got - exact) <= exact * (RELATIVE_ACCURACY + 1e-12), `bucket ${b.t} p${p}: ${got} within 1 % of ${exact}`)
        } else {
          t.is(got, exact, `bucket ${b.t} p${p}: exact`)
        }
      }
      // A sketched bucket answers with bin values, which the written values (two decimals) are not, but at p0 and p100.
      if (sketched(b)) sketchedSeen += PS.some((p) => p < 100 && b[`p${p}`] !== nearestRank(mine, p)) ? 1 : 0
      else exactSeen++
    }
    return { sketchedSeen, exactSeen }
  }
  const inDense = (b: Bucket) => dense.some((h) => b.t >= h && b.t < h + HOUR)
  const first = check(await read(), inDense, written)
  t.is(first.sketchedSeen, 8, 'the 8 buckets of the dense hours were answered from minute sketches')
  t.true(first.exactSeen >= 5, 'the sparse hour and the current hour exactly')

  // A late point in the first dense hour, the rollup refresh paused: persisted, the hour is pending a refresh, so its
  // buckets answer exactly; once the refresh rebuilds the hour, from sketches again, the point in them.
  await pauseRollups(app)
  const late = { stat: 'dense.g', t: dense[0] + 100, value: 12345.67 }
  const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points: [late] } })
  t.is(res.status, 200)
  await settle(app)
  const withLate = [...written, late]
  const [{ pending }] = await app.sql<{ pending: number }[]>`select count(*)::int as pending from rollup_pending where stat_id = ${id}`
  t.is(pending, 1, 'the late point waits for the refresh')
  const stale = check(await read(), (b) => inDense(b) && b.t >= dense[1], withLate)
  t.is(stale.sketchedSeen, 4, 'the other dense hour still from sketches')
  t.true(stale.exactSeen >= 9, "the late hour's 4 buckets exactly, beside the sparse and current hours")
  await app.api.deps.queues.get('rollups').resume()
  await refreshed()
  const after = check(await read(), inDense, withLate)
  t.is(after.sketchedSeen, 8, 'the dense hours from sketches again, the late point in them')
})
