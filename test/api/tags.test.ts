// Tags (docs/decisions.md §24): v1 writes with tags, a stat's series, reads as a whole, with a filter and
// grouped by a key, the /tags listing, the limits (each refusal stores nothing) and a delete taking the series.
import test, { type ExecutionContext } from 'ava'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { settle, stored } from '../helpers/storage.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite({ workers: true })
const nowS = () => Math.floor(Date.now() / 1000)

async function keyed(plan = 'pro'): Promise<{ user: User; key: string }> {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = ${plan} where id = ${user.accountId}`
  return { user, key: (await createKey(app.url, user)).key }
}

const post = (key: string, path: string, json: unknown) => request(app.url, path, { json, bearer: key })
const get = (key: string, path: string) => request(app.url, path, { bearer: key })

/** Sends a refused write and checks the status, the problem's code and detail, and that nothing was stored. */
async function refused(t: ExecutionContext, accountId: string, send: () => Promise<Reply>, status: number, code: string, detail: RegExp) {
  await settle(app)
  const before = await stored(app, accountId)
  const res = await send()
  t.is(res.status, status, res.text)
  t.is(res.body?.code, code)
  t.regex(String(res.body?.detail), detail)
  await settle(app)
  t.deepEqual(await stored(app, accountId), before, 'nothing stored, no allowance used')
}

test('tagged writes of one stat: read as a whole (counters summed), by filter, grouped by a key, and their tags listed', async (t) => {
  const { key } = await keyed()
  const t0 = nowS() - 120
  t.is((await post(key, '/api/v1/stats/requests/count', { count: 1, t: t0, tags: { host: 'web1', region: 'eu' } })).status, 200)
  const many = await post(key, '/api/v1/points', {
    points: [
      { stat: 'requests', count: 2, t: t0, tags: { region: 'eu', host: 'web2' } },
      { stat: 'requests', count: 4, t: t0, tags: { host: 'web3', region: 'us' } },
      { stat: 'requests', count: 8, t: t0 },
      { stat: 'requests', count: 16, t: t0, tags: { host: 'web1', region: 'eu' } },
    ],
  })
  t.is(many.status, 200, many.text)
  await settle(app)
  const list = await get(key, '/api/v1/stats')
  t.deepEqual(
    list.body.stats.map((s: any) => [s.name, s.series]),
    [['requests', 3]],
    'the stat once, with its three tag sets',
  )
  const whole = await get(key, '/api/v1/stats/requests?range=1h')
  t.is(whole.status, 200, whole.text)
  t.deepEqual(
    whole.body.points.map((p: any) => p.value),
    [31],
    'the whole stat sums every series',
  )
  t.false('groups' in whole.body)
  const eu = await get(key, '/api/v1/stats/requests?range=1h&filter=region:eu')
  t.deepEqual(
    eu.body.points.map((p: any) => p.value),
    [19],
  )
  const web1 = await get(key, '/api/v1/stats/requests?range=1h&filter=region:eu,host:web1')
  t.deepEqual(
    web1.body.points.map((p: any) => p.value),
    [17],
  )
  const byHost = await get(key, '/api/v1/stats/requests?range=1h&group_by=host')
  t.deepEqual(
    byHost.body.groups.map((g: any) => [g.tags, g.points.map((p: any) => p.value)]),
    [
      [{ host: 'web1' }, [17]],
      [{ host: 'web2' }, [2]],
      [{ host: 'web3' }, [4]],
    ],
    'one group per host, most observations first (then by value)',
  )
  t.deepEqual(byHost.body.points, whole.body.points, "a group-by read's whole counts the series without the key too")
  const byRegionInEu = await get(key, '/api/v1/stats/requests?range=1h&group_by=region&filter=region:eu')
  t.deepEqual(
    byRegionInEu.body.groups.map((g: any) => [g.tags, g.points[0].value]),
    [[{ region: 'eu' }, 19]],
  )
  const tags = await get(key, '/api/v1/stats/requests/tags')
  t.deepEqual(tags.body, {
    tags: [
      {
        key: 'host',
        values: [
          { value: 'web1', series: 1 },
          { value: 'web2', series: 1 },
          { value: 'web3', series: 1 },
        ],
      },
      {
        key: 'region',
        values: [
          { value: 'eu', series: 2 },
          { value: 'us', series: 1 },
        ],
      },
    ],
  })
})

test('gauges read as a whole are weighted by observation count, with min and max and percentiles over every series', async (t) => {
  const { key } = await keyed()
  const t0 = nowS() - 120
  const points = [
    ...[10, 20, 30].map((value) => ({ stat: 'latency', value, t: t0, tags: { host: 'a' } })),
    { stat: 'latency', value: 100, t: t0, tags: { host: 'b' } },
  ]
  t.is((await post(key, '/api/v1/points', { points })).status, 200)
  await settle(app)
  const whole = await get(key, '/api/v1/stats/latency?range=1h&percentiles=50,100')
  const [p] = whole.body.points
  t.is(p.value, 40)
  t.is(p.min, 10)
  t.is(p.max, 100)
  t.is(p.n, 4)
  t.is(p.p100, 100)
  t.is(p.p50, 20)
  const byHost = await get(key, '/api/v1/stats/latency?range=1h&group_by=host&percentiles=50')
  t.deepEqual(
    byHost.body.groups.map((g: any) => [g.tags.host, g.points[0].value, g.points[0].p50]),
    [
      ['a', 20, 20],
      ['b', 100, 100],
    ],
  )
})

test('past 50 groups the rest reads as one group marked other', async (t) => {
  const { key } = await keyed()
  const t0 = nowS() - 120
  const points = Array.from({ length: 53 }, (_, i) => ({ stat: 'hits', count: i < 50 ? 2 : 1, t: t0, tags: { host: `h${i}` } }))
  // The top 50 have two observations each; the last three one each.
  for (let i = 0; i < 50; i++) points.push({ stat: 'hits', count: 1, t: t0, tags: { host: `h${i}` } })
  t.is((await post(key, '/api/v1/points', { points })).status, 200)
  await settle(app)
  const res = await get(key, '/api/v1/stats/hits?range=1h&group_by=host')
  t.is(res.body.groups.length, 51)
  const other = res.body.groups[50]
  t.deepEqual(other.tags, {})
  t.true(other.other)
  t.is(other.points[0].value, 3)
  t.true(res.body.groups.slice(0, 50).every((g: any) => !g.other && g.points[0].value === 3))
})

test('a bad tag is a 400 naming it, and nothing of the request is stored', async (t) => {
  const { user, key } = await keyed()
  const cases: Array<[unknown, RegExp]> = [
    [{ Host: 'a' }, /points\[1\]: invalid tag key "Host"/],
    [{ host: '' }, /points\[1\]: invalid tag "host": the value must be 1 to 200 characters \(got 0\)/],
    [{ host: 'x'.repeat(201) }, /invalid tag "host": the value must be 1 to 200 characters \(got 201\)/],
    [{ host: 3 }, /invalid tag "host": the value must be a string/],
    [{ host: 'a\u0001b' }, /invalid tag "host": the value/],
    [Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])), /at most 10 tags per point \(got 11\)/],
    [['host'], /invalid tags: must be an object/],
  ]
  for (const [tags, detail] of cases)
    await refused(
      t,
      user.accountId,
      () =>
        post(key, '/api/v1/points', {
          points: [
            { stat: 'ok', count: 1 },
            { stat: 'bad', count: 1, tags },
          ],
        }),
      400,
      'invalid_tags',
      detail,
    )
  await refused(
    t,
    user.accountId,
    () => post(key, '/api/v1/stats/x/value', { value: 1, tags: { '9': 'a' } }),
    400,
    'invalid_tags',
    /invalid tag key "9"/,
  )
  t.is((await post(key, '/api/v1/stats/ok/count', { count: 1 })).status, 200)
  const filter = await get(key, '/api/v1/stats/ok?filter=host')
  t.is(filter.status, 400)
  t.is(filter.body.code, 'invalid_filter')
})

test('plans count series: the free plan takes 10 series of one stat, an 11th is refused with nothing stored', async (t) => {
  const { user, key } = await keyed('free')
  const points = Array.from({ length: 10 }, (_, i) => ({ stat: 'cpu', value: i, tags: { host: `h${i}` } }))
  const ok = await post(key, '/api/v1/points', { points })
  t.is(ok.status, 200, ok.text)
  await refused(
    t,
    user.accountId,
    () => post(key, '/api/v1/stats/cpu/value', { value: 1, tags: { host: 'h10' } }),
    403,
    'stat_limit',
    /the free plan tracks at most 10 stats/,
  )
  // An existing series still takes points.
  t.is((await post(key, '/api/v1/stats/cpu/value', { value: 1, tags: { host: 'h3' } })).status, 200)
})

test('a stat holds at most 1,000 series: a new one past it is a 403 naming the limit, with nothing stored', async (t) => {
  const { user, key } = await keyed('business')
  t.is((await post(key, '/api/v1/stats/conn/value', { value: 1, tags: { host: 'first' } })).status, 200)
  await settle(app)
  await app.sql`
    insert into stats (account_id, name, kind, parent_id, tags)
    select p.account_id, p.name, p.kind, p.id, jsonb_build_object('host', 'h' || i)
    from stats p, generate_series(1, 999) i where p.account_id = ${user.accountId} and p.name = 'conn' and p.parent_id is null`
  await refused(
    t,
    user.accountId,
    () =>
      post(key, '/api/v1/points', {
        points: [
          { stat: 'other', value: 1 },
          { stat: 'conn', value: 1, tags: { host: 'new' } },
        ],
      }),
    403,
    'series_limit',
    /stat "conn" holds at most 1000 series/,
  )
  t.is((await post(key, '/api/v1/stats/conn/value', { value: 2, tags: { host: 'h999' } })).status, 200)
})

test('kind, idempotency keys and deletion hold per series', async (t) => {
  const { user, key } = await keyed()
  const t0 = nowS() - 60
  t.is((await post(key, '/api/v1/stats/jobs/count', { count: 1, tags: { queue: 'a' } })).status, 200)
  await refused(
    t,
    user.accountId,
    () => post(key, '/api/v1/stats/jobs/value', { value: 1, tags: { queue: 'b' } }),
    400,
    'kind_conflict',
    /stat "jobs" is a counter/,
  )
  // The same t and ikey on two series are two points; a retry on one series is stored once.
  for (const queue of ['a', 'b', 'a'])
    t.is((await post(key, '/api/v1/stats/jobs/count', { count: 5, t: t0, ikey: 'k1', tags: { queue } })).status, 200)
  await settle(app)
  const whole = await get(key, '/api/v1/stats/jobs?range=1h')
  t.is(
    whole.body.points.reduce((n: number, p: any) => n + p.value, 0),
    11,
  )
  const del = await request(app.url, '/api/v1/stats/jobs', { method: 'DELETE', bearer: key })
  t.true(del.status < 300, del.text)
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from stats where account_id = ${user.accountId}`
  t.is(n, 0, 'the stat and its series are gone')
})
