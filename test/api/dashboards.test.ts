// Dashboards API (docs/decisions.md §17) on real PostgreSQL and Redis: create, list, read, rename,
// cards replaced in order, the data read, rejections (status, message, nothing stored), account isolation.
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

async function account(): Promise<{ user: User; key: string }> {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const n = Math.floor(Date.now() / 1000)
  const res = await request(app.url, '/ez', {
    json: {
      ezkey: key,
      data: [
        { stat: 'orders', count: 2, t: n - 600 },
        { stat: 'orders', count: 5, t: n - 30 },
        { stat: 'latency', value: 10, t: n - 600 },
        { stat: 'latency', value: 30, t: n - 30 },
        { stat: 'errors', count: 1, t: n - 2 * 86_400 },
      ],
    },
  })
  if (res.body.accepted !== 5) throw new Error(res.text)
  await settle(app)
  return { user, key }
}

const stored = async (accountId: string) =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from dashboards where account_id = ${accountId}`)[0].n

test('17 a dashboard is created with a key, listed, read with a session; cards keep their order, titles default to the names', async (t) => {
  const { user, key } = await account()
  const made = await request(app.url, '/api/v1/dashboards', {
    bearer: key,
    json: {
      name: 'Shop',
      cards: [
        { stats: ['orders', 'latency'], title: 'Orders and latency' },
        { stats: ['errors'], range: '7d' },
      ],
    },
  })
  t.is(made.status, 201, made.text)
  const d = made.body.dashboard
  t.like(d, { name: 'Shop', range: '24h' })
  t.is(d.cards.length, 2)
  t.like(d.cards[0], { title: 'Orders and latency', stats: ['orders', 'latency'], range: null })
  t.like(d.cards[1], { title: 'errors', stats: ['errors'], range: '7d' })
  t.regex(d.cards[0].id, /^[0-9a-f-]{36}$/)
  const list = await request(app.url, '/api/v1/dashboards', { session: user.session })
  t.is(list.status, 200)
  t.deepEqual(
    list.body.dashboards.map((x: { id: string }) => x.id),
    [d.id],
  )
  const one = await request(app.url, `/api/v1/dashboards/${d.id}`, { session: user.session })
  t.deepEqual(one.body.dashboard, d)
})

test('17 PATCH renames, sets the range, reorders and removes cards (kept cards keep their ids); DELETE is 204 then 404', async (t) => {
  const { user } = await account()
  const d = (
    await request(app.url, '/api/v1/dashboards', {
      session: user.session,
      json: { name: 'A', cards: [{ stats: ['orders'] }, { stats: ['latency'] }, { stats: ['errors'] }] },
    })
  ).body.dashboard
  const [a, b, c] = d.cards
  const renamed = await request(app.url, `/api/v1/dashboards/${d.id}`, {
    method: 'PATCH',
    session: user.session,
    json: { name: 'B', range: '7d' },
  })
  t.is(renamed.status, 200, renamed.text)
  t.like(renamed.body.dashboard, { name: 'B', range: '7d' })
  t.deepEqual(renamed.body.dashboard.cards, d.cards)
  const reordered = await request(app.url, `/api/v1/dashboards/${d.id}`, {
    method: 'PATCH',
    session: user.session,
    json: { cards: [{ id: c.id, stats: c.stats }, { id: a.id, stats: a.stats, range: '1h' }, { stats: ['orders', 'errors'] }] },
  })
  t.is(reordered.status, 200, reordered.text)
  const cards = reordered.body.dashboard.cards
  t.deepEqual(
    cards.slice(0, 2).map((x: { id: string }) => x.id),
    [c.id, a.id],
  )
  t.false(
    cards.some((x: { id: string }) => x.id === b.id),
    'the card left out is removed',
  )
  t.is(cards[1].range, '1h')
  t.deepEqual(cards[2].stats, ['orders', 'errors'])
  t.is((await request(app.url, `/api/v1/dashboards/${d.id}`, { method: 'DELETE', session: user.session })).status, 204)
  t.is((await request(app.url, `/api/v1/dashboards/${d.id}`, { session: user.session })).status, 404)
  t.is(await stored(user.accountId), 0)
})

test("17 the data read gives each card its window (its own range, else the dashboard's or the one asked) and its stats' buckets", async (t) => {
  const { user } = await account()
  const d = (
    await request(app.url, '/api/v1/dashboards', {
      session: user.session,
      json: { name: 'A', cards: [{ stats: ['orders', 'latency'] }, { stats: ['errors'], range: '7d' }] },
    })
  ).body.dashboard
  const res = await request(app.url, `/api/v1/dashboards/${d.id}/data`, { session: user.session })
  t.is(res.status, 200, res.text)
  const [first, second] = res.body.cards
  t.is(first.range.requested_range, '24h')
  t.deepEqual(
    first.series.map((s: { name: string; kind: string }) => [s.name, s.kind]),
    [
      ['orders', 'counter'],
      ['latency', 'gauge'],
    ],
  )
  t.is(
    first.series[0].points.reduce((s: number, p: { value: number }) => s + p.value, 0),
    7,
  )
  t.is(second.range.requested_range, '7d')
  t.is(
    second.series[0].points.reduce((s: number, p: { value: number }) => s + p.value, 0),
    1,
  )
  const hour = await request(app.url, `/api/v1/dashboards/${d.id}/data?range=1h`, { session: user.session })
  t.deepEqual(
    hour.body.cards.map((c: { range: { requested_range: string } }) => c.range.requested_range),
    ['1h', '7d'],
    "a card's own range overrides the one asked",
  )
  t.is((await request(app.url, `/api/v1/dashboards/${d.id}/data?range=2w`, { session: user.session })).status, 400)
})

test('17 rejections: clear 400s naming what is wrong, and nothing is stored', async (t) => {
  const { user, key } = await account()
  const cases: Array<[unknown, RegExp]> = [
    [{ cards: [] }, /^body\.name: /],
    [{ name: '', cards: [] }, /body\.name: must not be empty/],
    [{ name: 'x', cards: [{ stats: ['nope'] }] }, /cards\[0\]\.stats: no stat named "nope" in this account/],
    [{ name: 'x', cards: [{ stats: [] }] }, /body\.cards\.0\.stats: a card holds at least one stat/],
    [{ name: 'x', cards: [{ stats: ['orders', 'latency', 'errors', 'a', 'b', 'c'] }] }, /a card holds at most 5 stats/],
    [{ name: 'x', cards: [{ stats: ['orders', 'orders'] }] }, /names a stat twice/],
    [{ name: 'x', cards: [{ stats: ['orders'], range: '2w' }] }, /body\.cards\.0\.range: must be one of 1h, 6h, 24h, 7d, 30d, 90d, 180d/],
    [{ name: 'x', cards: Array.from({ length: 51 }, () => ({ stats: ['orders'] })) }, /at most 50 cards/],
    [{ name: 'x', cards: [{ stats: ['orders'], colour: 'red' }] }, /body\.cards\.0/],
    [{ name: 'x', cards: [{ id: '00000000-0000-4000-8000-000000000000', stats: ['orders'] }] }, /a new dashboard's cards have no id yet/],
    [{ name: 'bell\u0007', cards: [] }, /body\.name: /],
  ]
  for (const [json, detail] of cases) {
    const res = await request(app.url, '/api/v1/dashboards', { bearer: key, json })
    t.is(res.status, 400, JSON.stringify(json))
    t.regex(res.body.detail, detail, JSON.stringify(json))
  }
  t.is(await stored(user.accountId), 0, 'no rejected dashboard was stored')
  const d = (await request(app.url, '/api/v1/dashboards', { bearer: key, json: { name: 'kept', cards: [{ stats: ['orders'] }] } })).body
    .dashboard
  const patches: Array<[unknown, RegExp]> = [
    [{}, /nothing to change/],
    [{ cards: [{ stats: ['orders'] }, { stats: ['ghost'] }] }, /cards\[1\]\.stats: no stat named "ghost"/],
    [{ cards: [{ id: '00000000-0000-4000-8000-000000000000', stats: ['orders'] }] }, /not a card of this dashboard/],
  ]
  for (const [json, detail] of patches) {
    const res = await request(app.url, `/api/v1/dashboards/${d.id}`, { method: 'PATCH', bearer: key, json })
    t.is(res.status, 400, JSON.stringify(json))
    t.regex(res.body.detail, detail)
  }
  t.deepEqual((await request(app.url, `/api/v1/dashboards/${d.id}`, { bearer: key })).body.dashboard, d, 'a rejected PATCH changed nothing')
  const form = await request(app.url, '/api/v1/dashboards', { bearer: key, form: 'name=x' })
  t.is(form.status, 415)
})

test("17 another account's dashboard is a 404 on every route, and it is left as it was; nothing at all is 401", async (t) => {
  const { user } = await account()
  const d = (
    await request(app.url, '/api/v1/dashboards', { session: user.session, json: { name: 'mine', cards: [{ stats: ['orders'] }] } })
  ).body.dashboard
  const other = await account()
  for (const [method, path, json] of [
    ['GET', '', undefined],
    ['GET', '/data', undefined],
    ['PATCH', '', { name: 'taken' }],
    ['DELETE', '', undefined],
  ] as const) {
    const res = await request(app.url, `/api/v1/dashboards/${d.id}${path}`, { method, session: other.user.session, json })
    t.is(res.status, 404, `${method} ${path}`)
    t.is(res.body.detail, 'dashboard not found')
  }
  t.deepEqual((await request(app.url, '/api/v1/dashboards', { session: other.user.session })).body.dashboards, [])
  t.is((await request(app.url, `/api/v1/dashboards/${d.id}`, { session: user.session })).body.dashboard.name, 'mine')
  t.is((await request(app.url, '/api/v1/dashboards/not-a-uuid', { session: user.session })).status, 404)
  t.is((await request(app.url, '/api/v1/dashboards')).status, 401)
  // A card may not name another account's stat, even one of the same name as none of the caller's.
  const theirs = await request(app.url, '/api/v1/dashboards', {
    session: other.user.session,
    json: { name: 'x', cards: [{ stats: ['orders'] }] },
  })
  t.is(theirs.status, 201, 'their own "orders" is theirs to use')
})

test('17 deleting a stat removes it from the cards that held it; a card left empty disappears', async (t) => {
  const { user } = await account()
  const d = (
    await request(app.url, '/api/v1/dashboards', {
      session: user.session,
      json: { name: 'A', cards: [{ stats: ['orders', 'latency'] }, { stats: ['orders'] }, { stats: ['errors'] }] },
    })
  ).body.dashboard
  t.is((await request(app.url, '/api/v1/stats/orders', { method: 'DELETE', session: user.session })).status, 204)
  const after = (await request(app.url, `/api/v1/dashboards/${d.id}`, { session: user.session })).body.dashboard
  t.deepEqual(
    after.cards.map((c: { stats: string[] }) => c.stats),
    [['latency'], ['errors']],
  )
  t.is(after.cards[0].id, d.cards[0].id)
})

test('17 the dashboard routes are in the OpenAPI document', async (t) => {
  const doc = (await request(app.url, '/api/v1/openapi.json')).body
  for (const p of ['/api/v1/dashboards', '/api/v1/dashboards/{id}', '/api/v1/dashboards/{id}/data']) t.truthy(doc.paths[p], p)
  t.truthy(doc.paths['/api/v1/dashboards'].post.requestBody)
  t.truthy(doc.components.schemas.PatchDashboardBody)
})

test('17 a card stores filter and group_by; its data reads the matching series, one line per group; a bad one is 400, nothing stored', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const n = Math.floor(Date.now() / 1000)
  const written = await request(app.url, '/api/v1/points', {
    bearer: key,
    json: {
      points: [
        { stat: 'requests', count: 1, t: n - 60, tags: { host: 'web1', region: 'eu' } },
        { stat: 'requests', count: 2, t: n - 60, tags: { host: 'web2', region: 'eu' } },
        { stat: 'requests', count: 4, t: n - 60, tags: { host: 'web3', region: 'us' } },
        { stat: 'requests', count: 8, t: n - 60 },
      ],
    },
  })
  t.is(written.status, 200, written.text)
  await settle(app)
  const made = await request(app.url, '/api/v1/dashboards', {
    bearer: key,
    json: {
      name: 'Tags',
      range: '1h',
      cards: [
        { stats: ['requests'] },
        { stats: ['requests'], filter: 'region:eu' },
        { stats: ['requests'], filter: 'region:eu', group_by: 'host' },
      ],
    },
  })
  t.is(made.status, 201, made.text)
  t.deepEqual(
    made.body.dashboard.cards.map((c: { filter: string | null; group_by: string | null }) => [c.filter, c.group_by]),
    [
      [null, null],
      ['region:eu', null],
      ['region:eu', 'host'],
    ],
  )
  const id = made.body.dashboard.id
  const read = await request(app.url, `/api/v1/dashboards/${id}`, { bearer: key })
  t.deepEqual(read.body.dashboard.cards, made.body.dashboard.cards, 'stored as given')
  const data = await request(app.url, `/api/v1/dashboards/${id}/data`, { bearer: key })
  t.is(data.status, 200, data.text)
  const total = (points: Array<{ value: number }>) => points.reduce((a, p) => a + p.value, 0)
  const [whole, eu, byHost] = data.body.cards
  t.deepEqual(
    whole.series.map((s: any) => [s.tags ?? null, total(s.points)]),
    [[null, 15]],
    'without tags: the stat as a whole',
  )
  t.deepEqual(
    eu.series.map((s: any) => [s.tags ?? null, total(s.points)]),
    [[null, 3]],
    'filter: the eu series as one',
  )
  t.deepEqual(
    byHost.series.map((s: any) => [s.name, s.tags, total(s.points)]),
    [
      ['requests', { host: 'web1' }, 1],
      ['requests', { host: 'web2' }, 2],
    ],
    'group_by within the filter: one line per host (as many observations each: by value)',
  )

  for (const [card, message] of [
    [{ stats: ['requests'], filter: 'region' }, /cards\[0\]\.filter: invalid filter \\"region\\"/],
    [{ stats: ['requests'], group_by: 'Host!' }, /must be one tag key/],
  ] as const) {
    const res = await request(app.url, `/api/v1/dashboards/${id}`, { method: 'PATCH', bearer: key, json: { cards: [card] } })
    t.is(res.status, 400, res.text)
    t.regex(res.text, message)
    t.deepEqual((await request(app.url, `/api/v1/dashboards/${id}`, { bearer: key })).body.dashboard.cards, made.body.dashboard.cards)
  }
})
