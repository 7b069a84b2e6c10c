// A stat's unit and which way is good: set by PATCH, refused with clear 400s, read back on
// the stat and the dashboard data, and imported from the predecessor's statlist `unit`.
import test from 'ava'
import { readFileSync } from 'node:fs'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const fixture = (name: string) => readFileSync(new URL(`../fixtures/predecessor/${name}`, import.meta.url), 'utf8')

async function account() {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const t = Math.floor(Date.now() / 1000) - 60
  await request(app.url, '/api/v1/points', {
    json: {
      points: [
        { stat: 'latency', value: 120, t },
        { stat: 'signups', count: 2, t },
      ],
    },
    bearer: key,
  })
  await settle(app)
  return { user, key }
}

test('5 PATCH sets a unit and higher_is, each alone; null clears the unit; the description is kept', async (t) => {
  const { key } = await account()
  t.like((await request(app.url, '/api/v1/stats/latency', { bearer: key })).body.stat, { unit: null, higher_is: 'neither' })
  await request(app.url, '/api/v1/stats/latency', { method: 'PATCH', bearer: key, json: { description: 'p50 of checkout' } })
  const set = await request(app.url, '/api/v1/stats/latency', { method: 'PATCH', bearer: key, json: { unit: ' ms ', higher_is: 'worse' } })
  t.is(set.status, 200, set.text)
  t.like(set.body.stat, { unit: 'ms', higher_is: 'worse', description: 'p50 of checkout' })
  const dir = await request(app.url, '/api/v1/stats/latency', { method: 'PATCH', bearer: key, json: { higher_is: 'better' } })
  t.like(dir.body.stat, { unit: 'ms', higher_is: 'better' })
  const cleared = await request(app.url, '/api/v1/stats/latency', { method: 'PATCH', bearer: key, json: { unit: null } })
  t.like(cleared.body.stat, { unit: null, higher_is: 'better', description: 'p50 of checkout' })
  t.like(
    (await request(app.url, '/api/v1/stats', { bearer: key })).body.stats.find((s: { name: string }) => s.name === 'latency'),
    { unit: null, higher_is: 'better' },
  )
})

test('5 rejections name the field, and change nothing', async (t) => {
  const { user, key } = await account()
  await request(app.url, '/api/v1/stats/latency', { method: 'PATCH', bearer: key, json: { unit: 'ms', higher_is: 'worse' } })
  const cases: Array<[unknown, string]> = [
    [{}, 'body: nothing to change: give description, unit, higher_is or anomaly_sensitivity'],
    [{ anomaly_sensitivity: 'max' }, 'body.anomaly_sensitivity: must be one of low, normal, high'],
    [{ unit: 'x'.repeat(21) }, 'body.unit: must be at most 20 characters'],
    [{ unit: '  ' }, 'body.unit: must not be empty (null clears it)'],
    [{ higher_is: 'up' }, 'body.higher_is: must be one of better, worse, neither'],
    [{ unit: 'ms\u0000' }, ''],
  ]
  for (const [json, detail] of cases) {
    const res = await request(app.url, '/api/v1/stats/latency', { method: 'PATCH', bearer: key, json })
    t.is(res.status, 400, JSON.stringify(json))
    if (detail) t.is(res.body.detail, detail)
  }
  const [row] =
    await app.sql`select unit, higher_is, anomaly_sensitivity from stats where account_id = ${user.accountId} and name = 'latency'`
  t.deepEqual({ ...row }, { unit: 'ms', higher_is: 'worse', anomaly_sensitivity: 'normal' })
})

test('5 the dashboard data gives each series its unit', async (t) => {
  const { key } = await account()
  await request(app.url, '/api/v1/stats/latency', { method: 'PATCH', bearer: key, json: { unit: 'ms' } })
  const d = (await request(app.url, '/api/v1/dashboards', { bearer: key, json: { name: 'x', cards: [{ stats: ['latency', 'signups'] }] } }))
    .body.dashboard
  const data = await request(app.url, `/api/v1/dashboards/${d.id}/data`, { bearer: key })
  t.deepEqual(
    data.body.cards[0].series.map((s: { name: string; unit: string | null }) => [s.name, s.unit]),
    [
      ['latency', 'ms'],
      ['signups', null],
    ],
  )
})

async function finished(key: string, res: Reply): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const r = await request(app.url, `/api/v1/import/legacy/${res.body.import.id}`, { bearer: key })
    if (['completed', 'failed'].includes(r.body.import?.status) || Date.now() > deadline) return
    await new Promise((ok) => setTimeout(ok, 50))
  }
}

test("5 an import of the predecessor's {statlist, datasets} gives its stats the statlist's unit, not over one already set", async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const statlist = JSON.parse(fixture('export_statlist.json'))
  statlist[0].unit = 'smoots'
  statlist[1].unit = 'people'
  const datasets = JSON.parse(fixture('export_data_1w3h.json'))
  // "user created" exists with a unit of its own before the import.
  await request(app.url, '/api/v1/points', {
    json: { points: [{ stat: 'user created', count: 1, t: Math.floor(Date.now() / 1000) - 60 }] },
    bearer: key,
  })
  await settle(app)
  await request(app.url, '/api/v1/stats/user%20created', { method: 'PATCH', bearer: key, json: { unit: 'users' } })
  const res = await request(app.url, '/api/v1/import/legacy', {
    method: 'POST',
    bearer: key,
    body: JSON.stringify({ statlist, datasets }),
    headers: { 'content-type': 'application/json' },
  })
  t.is(res.status, 202, res.text)
  await finished(key, res)
  const rows = await app.sql<
    { name: string; unit: string | null }[]
  >`select name, unit from stats where account_id = ${user.accountId} order by name`
  t.deepEqual(
    rows.map((r) => [r.name, r.unit]),
    [
      ['request time', 'smoots'],
      ['user created', 'users'],
    ],
  )
})
