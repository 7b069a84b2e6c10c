// Correlations that catch co-spikes, through a real server
// on real PostgreSQL and Redis: the labelled set of the analytics bench
// (seed 1, two weeks of hourly counters on one daily cycle) written as
// points. The default method, departures, ranks each related stat in its
// target's top 3 and keeps every unrelated one under 0.3; Spearman, still
// there on request, misses the shared spikes and scores the shared daily
// cycle as a relation.
import test from 'ava'
import { randomUUID } from 'node:crypto'
import type { QueuedPoint } from '../../shared/jobs.js'
import { applyBatch } from '../../shared/points/repo.js'
import { labelledSet } from '../../bench/correlation-set.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

const HOUR = 3600
const NOW = Math.floor(Date.now() / 1000)
const set = labelledSet(1)
const HOURS = [...set.stats.values()][0].length
// The set's last hour is the last complete one: a counter reads 0 in hours after its last point, and every
// stat falling to 0 in the same hour would be a shared departure of its own. (Its daily cycle is periodic,
// so where its hour 0 falls in the UTC day does not matter.)
const start = Math.floor(NOW / HOUR) * HOUR - HOURS * HOUR
const app = appSuite()
let key: string

test.before(async () => {
  const owner = await signUp(app.url)
  key = (await createKey(app.url, owner)).key
  for (const [name, values] of set.stats) {
    const [s] = await app.sql<{ id: string }[]>`
      insert into stats (account_id, name, kind, created_at) values (${owner.accountId}, ${name}, 'counter', ${new Date(start * 1000)}) returning id`
    await applyBatch(
      app.sql,
      randomUUID(),
      values.map((v, h): QueuedPoint => [s.id, start + h * HOUR + 1800, v!, null]),
    )
  }
})

const corr = (q: string) => request(app.url, `/api/v1/correlations?${q}`, { bearer: key })

test("departures (the default): every related stat in its target's top 3, every unrelated one under 0.3", async (t) => {
  for (const target of set.targets) {
    const res = await corr(`stat=${target}&range=30d&max_lag=3`)
    t.is(res.status, 200, res.text)
    t.is(res.body.method, 'departures')
    const top = res.body.results.slice(0, 3).map((r: { stat_name: string }) => r.stat_name)
    for (const [, other, kind] of set.related.filter(([x]) => x === target))
      t.true(top.includes(other), `${target} ~ ${other} (${kind}): top 3 were ${top.join(', ')}`)
    for (const r of res.body.results.filter((x: { stat_name: string }) => x.stat_name.startsWith('noise.'))) {
      t.true(Math.abs(r.coefficient) < 0.3, `${target} ~ ${r.stat_name}: ${r.coefficient}`)
    }
  }
  const lag = (await corr('stat=lag.target&range=30d&max_lag=3')).body.results.find(
    (r: { stat_name: string }) => r.stat_name === 'lag.partner',
  )
  t.is(lag.lag_buckets, 2, 'the copy two hours late is found at its lag')
})

test('spearman on request: one shared spike is one rank step, and the shared daily cycle reads as a relation', async (t) => {
  const res = await corr('stat=spike.target&range=30d&method=spearman')
  t.is(res.body.method, 'spearman')
  const score = (name: string) => res.body.results.find((r: { stat_name: string }) => r.stat_name === name).coefficient
  const departures = (await corr('stat=spike.target&range=30d')).body
  const d = (name: string) => departures.results.find((r: { stat_name: string }) => r.stat_name === name).coefficient
  t.true(d('spike.partner') > score('spike.partner'), `departures ${d('spike.partner')} against spearman ${score('spike.partner')}`)
  t.true(
    res.body.results.some(
      (r: { stat_name: string; coefficient: number }) => r.stat_name.startsWith('noise.') && Math.abs(r.coefficient) >= 0.3,
    ),
  )
})

test('OpenAPI: the method parameter lists departures, the default', async (t) => {
  const doc = (await request(app.url, '/api/v1/openapi.json')).body
  const method = doc.paths['/api/v1/correlations'].get.parameters.find((p: { name: string }) => p.name === 'method')
  t.deepEqual(method.schema.enum, ['spearman', 'pearson', 'departures'])
  t.is(method.schema.default, 'departures')
})
