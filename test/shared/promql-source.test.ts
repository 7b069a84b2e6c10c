// The PromQL series source over the stats' series (shared/promql/source.ts) on real PostgreSQL: counters as running
// totals since the first point, read from raw rows and from rollups (minutes grouped to the step's buckets, hours,
// days), so that a long range answers as the raw points would.
import test from 'ava'
import type { QueuedPoint } from '../../shared/jobs.js'
import { seriesKey } from '../../shared/ingest/tags.js'
import { applyBatch } from '../../shared/points/repo.js'
import { instantQuery, rangeQuery, resolutionFor } from '../../shared/promql/engine.js'
import { parsePromQL } from '../../shared/promql/parse.js'
import { statsSource } from '../../shared/promql/source.js'
import { createStats } from '../../shared/stats/repo.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { signUp } from '../helpers/factories.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite()
const DAY = 86_400
// Three days, one point every 15 s (7 s past the grid): a counter of 1 each, a gauge of 5.
const start = Math.floor(Date.now() / 1000 / DAY) * DAY - 3 * DAY
let accountId = ''
let sparseId = ''
let variedIds: string[] = []
let gappyId = ''

test.serial.before(async () => {
  const user = await signUp(app.url)
  accountId = user.accountId
  await app.sql`update accounts set plan = 'business' where id = ${accountId}`
  const stats = await createStats(
    app.sql,
    accountId,
    [
      { name: 'hits', kind: 'counter' },
      { name: 'level', kind: 'gauge' },
      // Two series of a tagged counter (docs/decisions.md §24): 1 and 3 a point.
      { name: 'served', kind: 'counter', tags: { host: 'a' } },
      { name: 'served', kind: 'counter', tags: { host: 'b' } },
      // A counter like hits, whose minutes between the windows of a short-window query are taken away below.
      { name: 'sparse', kind: 'counter' },
      // Two series of a counter whose increments vary from point to point, so each bucket's increase differs.
      { name: 'varied', kind: 'counter', tags: { host: 'a' } },
      { name: 'varied', kind: 'counter', tags: { host: 'b' } },
      // A counter like hits with no points in the last 5 minutes of every third hour (and of the first day's last).
      { name: 'gappy', kind: 'counter' },
    ],
    100,
  )
  if (!(stats instanceof Map)) throw new Error('could not create the stats')
  const hits = stats.get('hits')!.stat.id
  const level = stats.get('level')!.stat.id
  const servedA = stats.get(seriesKey('served', { host: 'a' }))!.stat.id
  const servedB = stats.get(seriesKey('served', { host: 'b' }))!.stat.id
  sparseId = stats.get('sparse')!.stat.id
  variedIds = ['a', 'b'].map((host) => stats.get(seriesKey('varied', { host }))!.stat.id)
  gappyId = stats.get('gappy')!.stat.id
  const points: QueuedPoint[] = []
  for (let t = start + 7; t < start + 3 * DAY; t += 15) if (!gappyGap(t)) points.push([gappyId, t, 1, null])
  for (let t = start + 7, i = 0; t < start + 3 * DAY; t += 15, i++)
    points.push(
      [hits, t, 1, null],
      [level, t, 5, null],
      [servedA, t, 1, null],
      [servedB, t, 3, null],
      [sparseId, t, 1, null],
      [variedIds[0], t, 1 + (i % 7), null],
      [variedIds[1], t, 2 * (i % 5), null],
    )
  for (let i = 0; i < points.length; i += 5000) await applyBatch(app.sql, `b${i}`, points.slice(i, i + 5000))
  while ((await refreshRollups(app.sql)).rows > 0);
})

const source = () => statsSource((fn) => fn(app.sql))

/** Whether a time lies in one of gappy's gaps: the last 5 minutes of every third hour, and of the first day. */
function gappyGap(t: number): boolean {
  const next = Math.ceil(t / 3600) * 3600
  return next - t <= 300 && ((next / 3600) % 3 === 0 || next === start + DAY)
}

test('a counter is its running total since its first point', async (t) => {
  const d = await instantQuery(source(), accountId, 'hits', start + DAY + 60)
  // Points at 7, 22, 37, 52 s past each minute: 4 a minute, through the one at DAY + 52.
  t.deepEqual(d.resultType === 'vector' && d.result[0].value, [start + DAY + 60, String(4 * (DAY / 60) + 4)])
})

test('the total before a window inside an hour adds up its days, hours, five minutes, minutes and seconds', async (t) => {
  // 4 points a minute (7, 22, 37 and 52 s past it). Each instant's lookback starts inside an hour, on or off a
  // five-minute and a minute boundary, so every tier of the total before it is read: the hours and minutes before
  // the nearest midnight and hour are added, those after them taken away (12:31 is nearer the next midnight's
  // 13:00 than the day's start; 23:55 is Grafana's start for a step of five minutes).
  for (const [minutes, seconds, inMinute] of [
    [47, 30, 2],
    [5 * 60 + 25, 0, 0],
    [12 * 60 + 31, 12, 1],
    [18 * 60 + 40, 0, 0],
    [23 * 60 + 5, 53, 4],
    [23 * 60 + 55, 0, 0],
  ] as const) {
    const at = start + DAY + minutes * 60 + seconds
    const d = await instantQuery(source(), accountId, 'hits', at)
    t.deepEqual(
      d.resultType === 'vector' && d.result[0].value,
      [at, String(4 * (DAY / 60 + minutes) + inMinute)],
      `${minutes} min ${seconds} s`,
    )
  }
})

test('a range over two days reads 1-minute rollups and answers as the raw points do', async (t) => {
  const from = start + DAY / 2
  const to = from + 2 * DAY - 3600
  // The buckets every step and window falls on: 5 minutes (1-minute rollups grouped in SQL) for [5m] at an hour's step.
  t.is(resolutionFor(parsePromQL('rate(hits[5m])'), from * 1000, to * 1000, 3_600_000), 300)
  t.is(
    resolutionFor(parsePromQL('rate(hits[5m])'), (from + 37) * 1000, to * 1000, 3_600_000),
    60,
    'times on no whole minute: 1-minute buckets',
  )
  t.is(resolutionFor(parsePromQL('sum_over_time(level[5m])'), from * 1000, to * 1000, 3_600_000), 0, 'not a function a bucket serves')
  t.is(resolutionFor(parsePromQL('rate(hits[5m])'), from * 1000, (from + 3600) * 1000, 60_000), 0, 'a short span reads raw points')
  const long = await rangeQuery(source(), accountId, 'rate(hits[5m])', from, to, 3600)
  if (long.resultType !== 'matrix') throw new Error('not a matrix')
  t.is(long.result[0].values.length, 48)
  for (const [ts, v] of long.result[0].values) {
    const raw = await instantQuery(source(), accountId, 'rate(hits[5m])', ts)
    t.true(raw.resultType === 'vector' && Math.abs(Number(raw.result[0].value[1]) - Number(v)) < 1e-9, `${ts}: ${v} vs raw`)
    t.true(Math.abs(Number(v) - 1 / 15) < 1e-9)
  }
  const totals = await rangeQuery(source(), accountId, 'hits', from, to, 3600)
  if (totals.resultType !== 'matrix') throw new Error('not a matrix')
  // At each hour the newest rollup sample is the total through the previous minute's end.
  const [t0, v0] = totals.result[0].values[0]
  t.is(Number(v0), ((t0 - start) / 60) * 4)
  const gauge = await rangeQuery(source(), accountId, 'avg_over_time(level[10m])', from, to, 3600)
  t.true(gauge.resultType === 'matrix' && gauge.result[0].values.every(([, v]) => v === '5'))
})

test('tagged series are series of their own, each a running total, over rollups as over raw points', async (t) => {
  const from = start + DAY / 2
  const to = from + 2 * DAY - 3600
  const long = await rangeQuery(source(), accountId, 'sum by (host) (rate(served[5m]))', from, to, 3600)
  if (long.resultType !== 'matrix') throw new Error('not a matrix')
  t.deepEqual(
    long.result.map((s) => s.metric).sort((x, y) => (x.host < y.host ? -1 : 1)),
    [{ host: 'a' }, { host: 'b' }],
  )
  for (const series of long.result) {
    const per = series.metric.host === 'b' ? 3 : 1
    t.is(series.values.length, 48)
    t.true(
      series.values.every(([, v]) => Math.abs(Number(v) - per / 15) < 1e-9),
      `host ${series.metric.host}`,
    )
  }
  const b = await instantQuery(source(), accountId, 'served{host="b"}', start + DAY + 60)
  t.deepEqual(b.resultType === 'vector' && b.result, [
    { metric: { __name__: 'served', host: 'b' }, value: [start + DAY + 60, String(3 * (4 * (DAY / 60) + 4))] },
  ])
})

test("an hour step reads hourly rollups, a day step daily ones: a counter's totals and increases as the raw points give them", async (t) => {
  const from = start + DAY
  const to = start + 3 * DAY
  t.is(resolutionFor(parsePromQL('rate(hits[1h])'), from * 1000, to * 1000, 3_600_000), 3600)
  t.is(resolutionFor(parsePromQL('hits'), from * 1000, to * 1000, 3_600_000), 3600)
  t.is(resolutionFor(parsePromQL('increase(served[1d])'), from * 1000, to * 1000, 86_400_000), 86_400)
  const atMidnight = resolutionFor(parsePromQL('increase(hits[2d])'), to * 1000, to * 1000, 0)
  t.true(atMidnight >= 86_400 && atMidnight % 86_400 === 0, `an instant query at a midnight: ${atMidnight}`)
  t.is(resolutionFor(parsePromQL('max_over_time(level[1h])'), from * 1000, to * 1000, 3_600_000), 0, 'not a function a bucket serves')
  // One bucket a window: the window takes the total at its start too, so the rate is the hour's own increase.
  const hourly = await rangeQuery(source(), accountId, 'rate(hits[1h])', from, to, 3600)
  if (hourly.resultType !== 'matrix') throw new Error('not a matrix')
  t.is(hourly.result[0].values.length, 49)
  for (const [ts, v] of hourly.result[0].values.filter((_, i) => i % 12 === 0)) {
    t.true(Math.abs(Number(v) - 1 / 15) < 1e-9, `${ts}: ${v}`)
    const raw = await instantQuery(source(), accountId, 'rate(hits[1h])', ts)
    t.true(raw.resultType === 'vector' && Math.abs(Number(raw.result[0].value[1]) - Number(v)) < 1e-9, `${ts}: ${v} vs raw`)
  }
  // The total at each hour: every point before it.
  const totals = await rangeQuery(source(), accountId, 'hits', from, to, 3600)
  t.true(totals.resultType === 'matrix' && totals.result[0].values.every(([ts, v]) => Number(v) === ((ts - start) / 60) * 4))
  const daily = await rangeQuery(source(), accountId, 'increase(served[1d])', from, to, DAY)
  if (daily.resultType !== 'matrix') throw new Error('not a matrix')
  // At `from` the window's start has no sample (no point in the day before it): a bucket is a sample at its end only.
  t.deepEqual(daily.result.map((s) => [s.metric.host, s.values]).sort(), [
    [
      'a',
      [
        [from + DAY, String(4 * 1440)],
        [to, String(4 * 1440)],
      ],
    ],
    [
      'b',
      [
        [from + DAY, String(12 * 1440)],
        [to, String(12 * 1440)],
      ],
    ],
  ])
  const two = await instantQuery(source(), accountId, 'increase(hits[2d])', to)
  t.deepEqual(two.resultType === 'vector' && two.result, [{ metric: {}, value: [to, String(2 * 4 * 1440)] }])
  // A gauge over rollups is each bucket's mean.
  const level = await rangeQuery(source(), accountId, 'level', from, to, 3600)
  t.true(level.resultType === 'matrix' && level.result[0].values.length === 49 && level.result[0].values.every(([, v]) => v === '5'))
})

test("a window that is not whole buckets (Grafana's $__rate_interval) reads the largest buckets no longer than it", async (t) => {
  const from = start + DAY
  const to = start + 2 * DAY
  // A 5-minute step with a 5m15s window: 5-minute buckets, the rate extrapolated from the buckets' ends as from samples.
  t.is(resolutionFor(parsePromQL('rate(hits[5m15s])'), from * 1000, to * 1000, 300_000), 300)
  t.is(resolutionFor(parsePromQL('rate(hits[1m30s])'), from * 1000, to * 1000, 300_000), 60)
  t.is(resolutionFor(parsePromQL('rate(hits[30s])'), from * 1000, to * 1000, 300_000), 0, 'a window shorter than a minute reads raw points')
  const res = await rangeQuery(source(), accountId, 'rate(hits[5m15s])', from, to, 300)
  if (res.resultType !== 'matrix') throw new Error('not a matrix')
  t.is(res.result[0].values.length, 289)
  t.true(
    res.result[0].values.every(([, v]) => Math.abs(Number(v) - 1 / 15) < 1e-9),
    'the steady 4 points a minute',
  )
})

test('a window much shorter than the step reads only its stretch of each step: the totals at its edges come from the hours and the minutes next to them', async (t) => {
  const from = start + DAY
  const to = start + 2 * DAY
  t.is(resolutionFor(parsePromQL('last_over_time(sparse[5m])'), from * 1000, to * 1000, 3_600_000), 300)
  // The 1- and 5-minute rollups lose every minute from 10 to 49 past each hour (rollups_1h keeps them): a read of the
  // whole span's buckets would miss their points in every running total.
  await app.sql`delete from rollups_1m where stat_id = ${sparseId} and extract(epoch from bucket)::bigint % 3600 between 600 and 2940`
  await app.sql`delete from rollups_5m where stat_id = ${sparseId} and extract(epoch from bucket)::bigint % 3600 between 600 and 2700`
  const totals = await rangeQuery(source(), accountId, 'last_over_time(sparse[5m])', from, to, 3600)
  if (totals.resultType !== 'matrix') throw new Error('not a matrix')
  t.is(totals.result[0].values.length, 25)
  for (const [ts, v] of totals.result[0].values) t.is(Number(v), ((ts - start) / 60) * 4, `the total at ${ts}`)
  const rates = await rangeQuery(source(), accountId, 'rate(sparse[5m])', from, to, 3600)
  t.true(rates.resultType === 'matrix' && rates.result[0].values.every(([, v]) => Math.abs(Number(v) - 1 / 15) < 1e-9))
  // Windows from 5 minutes before each hour to 5 minutes past it: the totals at their edges from the hour's, the
  // minutes between taken away or added.
  const off = await rangeQuery(source(), accountId, 'increase(sparse[10m] offset 55m)', from, to, 3600)
  t.true(off.resultType === 'matrix' && off.result[0].values.every(([, v]) => Number(v) === 40), 'ten minutes of 4 points')
  // The first of those windows starts before the span's first midnight: its totals come from the hours before it.
  const offTotals = await rangeQuery(source(), accountId, 'last_over_time(sparse[10m] offset 55m)', from, to, 3600)
  if (offTotals.resultType !== 'matrix') throw new Error('not a matrix')
  for (const [ts, v] of offTotals.result[0].values) t.is(Number(v), ((ts - 55 * 60 - start) / 60) * 4, `the total 55 minutes before ${ts}`)
})

test('rate summed over series at 5 and 15 minutes (buckets of 5-minute rollups) is the increase of the minute rows in each window', async (t) => {
  const from = start + DAY
  const to = start + 2 * DAY
  // Every raw minute row of both series, by the minute's start.
  const minutes = new Map<number, number>()
  for (const r of await app.sql<{ b: number; sum: number }[]>`
    select extract(epoch from bucket)::int8 as b, sum(sum) as sum from rollups_1m
    where stat_id = any(${variedIds}::uuid[]) and bucket >= to_timestamp(${from - 3600}) and bucket < to_timestamp(${to}) group by 1`)
    minutes.set(Number(r.b), r.sum)
  const increase = (a: number, b: number) => {
    let sum = 0
    for (let m = a; m < b; m += 60) sum += minutes.get(m) ?? 0
    return sum
  }
  for (const [query, step, window, size] of [
    ['sum(rate(varied[5m15s]))', 300, 300, 300],
    ['sum(rate(varied[15m]))', 900, 900, 900],
    // A window much shorter than the step: only the minutes next to each hour are read.
    ['sum(rate(varied[5m]))', 3600, 300, 300],
  ] as const) {
    t.is(resolutionFor(parsePromQL(query), from * 1000, to * 1000, step * 1000), size, query)
    const res = await rangeQuery(source(), accountId, query, from, to, step)
    if (res.resultType !== 'matrix') throw new Error('not a matrix')
    t.is(res.result.length, 1)
    t.is(res.result[0].values.length, DAY / step + 1, query)
    const varies = new Set<string>()
    for (const [ts, v] of res.result[0].values) {
      const expected = increase(ts - window, ts) / window
      t.true(Math.abs(Number(v) - expected) <= 1e-12 * expected, `${query} at ${ts}: ${v}, the minutes give ${expected}`)
      varies.add(v)
    }
    t.true(varies.size > 1, `${query}: the windows' increases differ`)
  }
  // Evaluated a series at a time, as these are, the answers are the step-by-step ones: `(q) != NaN` keeps every
  // sample and label of q, and is evaluated step by step (a binary operation).
  for (const query of ['sum(rate(varied[5m15s]))', 'rate(varied[5m15s])', 'varied', 'avg by (host) (increase(varied[1h]))'])
    for (const step of [300, 900, 3600]) {
      const columns = await rangeQuery(source(), accountId, query, from, to, step)
      t.deepEqual(await rangeQuery(source(), accountId, `(${query}) != NaN`, from, to, step), columns, `${query} step ${step}`)
    }
  // Points not folded into the rollups yet (rollup_pending, unless a scheduled refresh has taken them meanwhile:
  // the answer is the same): one inside the minutes read before an hour, one between two hours' windows.
  const h = from + 6 * 3600
  await applyBatch(app.sql, 'varied-tail', [
    [variedIds[0], h - 100, 1000, null],
    [variedIds[0], h - 1800, 5000, null],
  ])
  const res = await rangeQuery(source(), accountId, 'sum(rate(varied[5m]))', from, to, 3600)
  if (res.resultType !== 'matrix') throw new Error('not a matrix')
  for (const [ts, v] of res.result[0].values) {
    const expected = (increase(ts - 300, ts) + (ts === h ? 1000 : 0)) / 300
    t.true(Math.abs(Number(v) - expected) <= 1e-12 * expected, `with the tail, at ${ts}: ${v}, the points give ${expected}`)
  }
})

test("a counter's samples at a short window's edges over whole days: a bucket without points is no sample, and the totals run on past it", async (t) => {
  // The span's whole day is read from its held blob at each window's edges (source.ts, runningFromBlobs); the
  // window ending on its first midnight from the buckets of the day before.
  const from = start + DAY
  const to = start + 2 * DAY
  const points = (a: number, b: number) => {
    let n = 0
    for (let x = start + 7; x < b; x += 15) if (x >= a && !gappyGap(x)) n++
    return n
  }
  for (let round = 0; round < 2; round++) {
    const res = await rangeQuery(source(), accountId, 'last_over_time(gappy[5m])', from, to, 3600)
    if (res.resultType !== 'matrix') throw new Error('not a matrix')
    const values = new Map(res.result[0].values.map(([ts, v]) => [ts, Number(v)]))
    for (let ts = from; ts <= to; ts += 3600)
      if (gappyGap(ts - 1)) t.false(values.has(ts), `no sample in the window ending ${ts - from} s into the day`)
      else t.is(values.get(ts), points(start, ts), `the total at ${ts - from} s into the day (round ${round})`)
    t.is(values.size, 25 - 9, 'every step but those whose window is a gap')
    const increases = await rangeQuery(source(), accountId, 'increase(gappy[5m])', from, to, 3600)
    if (increases.resultType !== 'matrix') throw new Error('not a matrix')
    // Over rollups a window's samples are the ends of its 5-minute buckets, both edges included: where the last
    // bucket is a gap, one sample and no increase; elsewhere the last bucket's 20 points (4 a minute).
    t.is(increases.result[0].values.length, 25 - 9)
    for (const [ts, v] of increases.result[0].values) {
      t.false(gappyGap(ts - 1), `no increase at ${ts - from} s into the day`)
      t.is(Number(v), 20, `the increase at ${ts - from} s into the day`)
    }
  }
})
