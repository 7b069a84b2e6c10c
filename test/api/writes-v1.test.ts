// v1 write routes (docs/decisions.md §I-2.1, §I-2.2, §I-4.2, §I-7, §I-8; §1 and §4):
// POST /api/v1/stats/:name/count, /value and POST /api/v1/points.
import test, { type ExecutionContext } from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { settle, stored, type Stored } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const nowS = () => Math.floor(Date.now() / 1000)
const enc = encodeURIComponent

async function keyed(plan?: string): Promise<{ user: User; key: string }> {
  const user = await signUp(app.url)
  if (plan) await app.sql`update accounts set plan = ${plan} where id = ${user.accountId}`
  return { user, key: (await createKey(app.url, user)).key }
}

/** What the account has stored, once everything accepted so far has been persisted. */
async function snapshot(accountId: string): Promise<Stored> {
  await settle(app)
  return stored(app, accountId)
}

/** The values stored for one stat, in insertion-independent order. */
async function valuesOf(accountId: string, name: string): Promise<number[]> {
  const rows = await app.sql<{ value: number }[]>`
    select p.value from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${accountId} and s.name = ${name} order by p.value`
  return rows.map((r) => r.value)
}

async function statRow(accountId: string, name: string) {
  const [row] = await app.sql<
    { name: string; kind: string }[]
  >`select name, kind from stats where account_id = ${accountId} and name = ${name}`
  return row
}

function isProblem(t: ExecutionContext, res: Reply, status: number, detail: string | RegExp, code?: string): void {
  t.is(res.status, status, res.text)
  t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/)
  t.is(res.body?.status, status)
  if (typeof detail === 'string') t.is(res.body?.detail, detail)
  else t.regex(String(res.body?.detail), detail)
  if (code) t.is(res.body?.code, code)
  t.is(typeof res.body?.type, 'string')
  t.is(typeof res.body?.title, 'string')
}

/** Sends a rejected write and checks the problem body and that nothing at all was stored. */
async function rejected(
  t: ExecutionContext,
  accountId: string,
  send: () => Promise<Reply>,
  status: number,
  detail: string | RegExp,
  code?: string,
): Promise<Reply> {
  const before = await snapshot(accountId)
  const res = await send()
  isProblem(t, res, status, detail, code)
  t.deepEqual(await snapshot(accountId), before, 'nothing stored, no allowance used')
  return res
}

// ---------------------------------------------------------------- auth

test('count and value routes with a Bearer key: 200 {"status": "ok"}, the stat is created with the kind of the route', async (t) => {
  const { user, key } = await keyed()
  const c = await request(app.url, '/api/v1/stats/requests/count', { json: { count: 3 }, bearer: key })
  t.is(c.status, 200)
  t.deepEqual(c.body, { status: 'ok' })
  t.regex(c.headers.get('content-type') ?? '', /^application\/json/)
  const v = await request(app.url, '/api/v1/stats/temperature/value', { json: { value: 21.5 }, bearer: key })
  t.is(v.status, 200)
  t.deepEqual(v.body, { status: 'ok' })
  await settle(app)
  t.is((await statRow(user.accountId, 'requests')).kind, 'counter')
  t.is((await statRow(user.accountId, 'temperature')).kind, 'gauge')
  t.deepEqual(await valuesOf(user.accountId, 'requests'), [3])
  t.deepEqual(await valuesOf(user.accountId, 'temperature'), [21.5])
})

test('count and value routes with a dashboard session and its CSRF header: 200', async (t) => {
  const user = await signUp(app.url)
  const c = await request(app.url, '/api/v1/stats/clicks/count', { json: { count: 1 }, session: user.session })
  t.is(c.status, 200)
  t.deepEqual(c.body, { status: 'ok' })
  const v = await request(app.url, '/api/v1/stats/load/value', { json: { value: 0.5 }, session: user.session })
  t.is(v.status, 200)
  t.deepEqual(v.body, { status: 'ok' })
  const p = await request(app.url, '/api/v1/points', { json: { points: [{ stat: 'clicks', count: 2 }] }, session: user.session })
  t.is(p.status, 200)
  await settle(app)
  t.deepEqual(await valuesOf(user.accountId, 'clicks'), [1, 2])
  t.deepEqual(await valuesOf(user.accountId, 'load'), [0.5])
})

test('session write without (or with a wrong) X-Service-CSRF header: 403 and nothing stored', async (t) => {
  const user = await signUp(app.url)
  const noCsrf = { cookie: user.session.cookie }
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/clicks/count', { json: { count: 1 }, session: noCsrf }),
    403,
    'missing or wrong X-Service-CSRF header',
    'csrf_failed',
  )
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/load/value', { json: { value: 1 }, session: noCsrf }),
    403,
    'missing or wrong X-Service-CSRF header',
    'csrf_failed',
  )
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/points', { json: { points: [{ stat: 'clicks', count: 1 }] }, session: noCsrf }),
    403,
    'missing or wrong X-Service-CSRF header',
    'csrf_failed',
  )
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/clicks/count', { json: { count: 1 }, session: { cookie: user.session.cookie, csrf: 'forged' } }),
    403,
    'missing or wrong X-Service-CSRF header',
    'csrf_failed',
  )
  t.is((await snapshot(user.accountId)).stats, 0)
})

test('missing or forged key: 401 and nothing stored', async (t) => {
  const { user, key } = await keyed()
  const forged = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA')
  for (const path of ['/api/v1/stats/s401/count', '/api/v1/stats/s401/value', '/api/v1/points']) {
    const json = path.endsWith('points') ? { points: [{ stat: 's401', count: 1 }] } : path.endsWith('count') ? { count: 1 } : { value: 1 }
    await rejected(t, user.accountId, () => request(app.url, path, { json }), 401, /credentials/, 'unauthorized')
    await rejected(t, user.accountId, () => request(app.url, path, { json, bearer: forged }), 401, 'invalid API key', 'unauthorized')
    await rejected(
      t,
      user.accountId,
      () => request(app.url, path, { json, headers: { authorization: 'Basic abc' } }),
      401,
      'invalid API key',
      'unauthorized',
    )
  }
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from stats where name = 's401'`
  t.is(n, 0)
})

// ---------------------------------------------------------------- numbers

test('JSON numbers and decimal strings are accepted identically', async (t) => {
  const { user, key } = await keyed('starter') // 18 stats: more than the free plan tracks
  const pairs: Array<[number, string]> = [
    [2.5, '2.5'],
    [-4, '-4'],
    [1e6, '1e+06'],
    [1e-5, '1e-05'],
    [1e7, '1.0E7'],
    [92.194, '92.194000'],
    [3, ' 3 '],
    [1e15, '1e15'],
    [-1e15, '-1000000000000000'],
  ]
  for (const [i, [n, s]] of pairs.entries()) {
    const a = await request(app.url, `/api/v1/stats/c${i}/count`, { json: { count: n }, bearer: key })
    const b = await request(app.url, `/api/v1/stats/c${i}/count`, { json: { count: s }, bearer: key })
    t.deepEqual([a.status, a.body], [200, { status: 'ok' }], `count ${n}`)
    t.deepEqual([b.status, b.body], [200, { status: 'ok' }], `count ${JSON.stringify(s)}`)
    const g = await request(app.url, `/api/v1/stats/g${i}/value`, { json: { value: n }, bearer: key })
    const h = await request(app.url, `/api/v1/stats/g${i}/value`, { json: { value: s }, bearer: key })
    t.deepEqual([g.status, g.body, h.status, h.body], [200, { status: 'ok' }, 200, { status: 'ok' }], `value ${n} / ${JSON.stringify(s)}`)
  }
  await settle(app)
  for (const [i, [n, s]] of pairs.entries()) {
    t.deepEqual(await valuesOf(user.accountId, `c${i}`), [n, n], `count ${JSON.stringify(s)} stored as ${n}`)
    t.deepEqual(await valuesOf(user.accountId, `g${i}`), [n, n], `value ${JSON.stringify(s)} stored as ${n}`)
  }
})

test('count=0 stores 0 (JSON 0, "0" and "-0")', async (t) => {
  const { user, key } = await keyed()
  for (const count of [0, '0', '-0'])
    t.is((await request(app.url, '/api/v1/stats/zero/count', { json: { count }, bearer: key })).status, 200)
  await settle(app)
  const values = await valuesOf(user.accountId, 'zero')
  t.deepEqual(values, [0, 0, 0])
  t.false(values.some((v) => Object.is(v, -0)))
})

test('invalid count: not a number (400, nothing stored) for hex, trailing garbage, booleans, arrays, objects, NaN and Infinity', async (t) => {
  const { user, key } = await keyed()
  await request(app.url, '/api/v1/stats/existing/count', { json: { count: 1 }, bearer: key })
  const bad: unknown[] = [
    '0x1A',
    '12abc',
    'abc',
    '1,5',
    '1_000',
    true,
    false,
    [1],
    {},
    { n: 1 },
    'NaN',
    'Infinity',
    '-Infinity',
    '1e',
    '.',
    '+',
  ]
  for (const count of bad) {
    for (const name of ['existing', 'fresh']) {
      await rejected(
        t,
        user.accountId,
        () => request(app.url, `/api/v1/stats/${name}/count`, { json: { count }, bearer: key }),
        400,
        'invalid count: not a number',
        'invalid_count',
      )
    }
  }
  for (const value of ['0x10', 'ten', true, [2], {}]) {
    await rejected(
      t,
      user.accountId,
      () => request(app.url, '/api/v1/stats/gauge/value', { json: { value }, bearer: key }),
      400,
      'invalid value: not a number',
      'invalid_value',
    )
  }
  t.falsy(await statRow(user.accountId, 'fresh'), 'a rejection never creates a stat')
  t.falsy(await statRow(user.accountId, 'gauge'))
})

test('invalid count: out of range (magnitude above 1e15), as JSON number and as string', async (t) => {
  const { user, key } = await keyed()
  for (const count of [1e16, -1e16, '1000000000000001', '1e16', '-1e400', '1e400']) {
    await rejected(
      t,
      user.accountId,
      () => request(app.url, '/api/v1/stats/big/count', { json: { count }, bearer: key }),
      400,
      'invalid count: out of range',
      'count_out_of_range',
    )
  }
  // JSON text 1e400 parses to Infinity on the server: still out of range, not "not a number".
  await rejected(
    t,
    user.accountId,
    () =>
      request(app.url, '/api/v1/stats/big/count', {
        body: '{"count": 1e400}',
        headers: { 'content-type': 'application/json' },
        bearer: key,
      }),
    400,
    'invalid count: out of range',
  )
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/big/value', { json: { value: 2e15 }, bearer: key }),
    400,
    'invalid value: out of range',
    'value_out_of_range',
  )
  t.falsy(await statRow(user.accountId, 'big'))
})

test('invalid value: missing for an absent value on the value route', async (t) => {
  const { user, key } = await keyed()
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/gauge/value', { json: {}, bearer: key }),
    400,
    'invalid value: missing',
    'missing_value',
  )
  // A count sent to the value route does not stand in for the value.
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/gauge/value', { json: { count: 5 }, bearer: key }),
    400,
    'invalid value: missing',
    'missing_value',
  )
  t.falsy(await statRow(user.accountId, 'gauge'))
})

test('empty or null count (and value) is a 400; an absent count is not defaulted to 1 on v1', async (t) => {
  const { user, key } = await keyed()
  for (const count of ['', '   ', null]) {
    await rejected(
      t,
      user.accountId,
      () => request(app.url, '/api/v1/stats/c/count', { json: { count }, bearer: key }),
      400,
      'invalid count: empty',
      'empty_count',
    )
  }
  for (const value of ['', ' ', null]) {
    await rejected(
      t,
      user.accountId,
      () => request(app.url, '/api/v1/stats/g/value', { json: { value }, bearer: key }),
      400,
      'invalid value: empty',
      'empty_value',
    )
  }
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/c/count', { json: {}, bearer: key }),
    400,
    'invalid count: missing',
    'missing_count',
  )
  t.is((await snapshot(user.accountId)).stats, 0)
})

test('a body that is not JSON, or not an object, is a 400 and stores nothing', async (t) => {
  const { user, key } = await keyed()
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/c/count', { body: '{"count": 1', headers: { 'content-type': 'application/json' }, bearer: key }),
    400,
    /./,
  )
  await rejected(t, user.accountId, () => request(app.url, '/api/v1/stats/c/count', { json: [1], bearer: key }), 400, /./)
  await rejected(t, user.accountId, () => request(app.url, '/api/v1/points', { json: { points: 'x' }, bearer: key }), 400, /^body\.points/)
  await rejected(t, user.accountId, () => request(app.url, '/api/v1/points', { json: {}, bearer: key }), 400, /^body\.points/)
})

// ---------------------------------------------------------------- timestamps

test('invalid timestamp: too far in the future (more than 5 minutes ahead, or milliseconds)', async (t) => {
  const { user, key } = await keyed()
  for (const tt of [nowS() + 400, String(nowS() + 400), Date.now()]) {
    await rejected(
      t,
      user.accountId,
      () => request(app.url, '/api/v1/stats/c/count', { json: { count: 1, t: tt }, bearer: key }),
      400,
      'invalid timestamp: too far in the future',
      'timestamp_in_future',
    )
    await rejected(
      t,
      user.accountId,
      () => request(app.url, '/api/v1/stats/g/value', { json: { value: 1, t: tt }, bearer: key }),
      400,
      'invalid timestamp: too far in the future',
      'timestamp_in_future',
    )
  }
  // Up to 5 minutes ahead is accepted.
  const ok = await request(app.url, '/api/v1/stats/c/count', { json: { count: 1, t: nowS() + 240 }, bearer: key })
  t.is(ok.status, 200)
})

test('invalid timestamp: before 2000-01-01 (with a hint about uninitialised values); exactly 2000-01-01 is accepted', async (t) => {
  const { user, key } = await keyed()
  for (const tt of [946684799, 0, -1, '946684799']) {
    const res = await rejected(
      t,
      user.accountId,
      () => request(app.url, '/api/v1/stats/c/count', { json: { count: 1, t: tt }, bearer: key }),
      400,
      /^invalid timestamp: before 2000-01-01/,
      'timestamp_too_old',
    )
    t.regex(res.body.detail, /uninitiali[sz]ed/)
  }
  t.is((await request(app.url, '/api/v1/stats/c/count', { json: { count: 1, t: 946684800 }, bearer: key })).status, 200)
  t.is((await request(app.url, '/api/v1/stats/c/count', { json: { count: 1, t: '1700000000.9' }, bearer: key })).status, 200)
  await settle(app)
  const rows = await app.sql<
    { t: number }[]
  >`select extract(epoch from p.ts)::int as t from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${user.accountId} order by 1`
  t.deepEqual(
    rows.map((r) => r.t),
    [946684800, 1700000000],
    'fractions are truncated',
  )
})

test('a non-numeric t is a 400', async (t) => {
  const { user, key } = await keyed()
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/c/count', { json: { count: 1, t: 'yesterday' }, bearer: key }),
    400,
    'invalid timestamp: not a number',
  )
})

// ---------------------------------------------------------------- stat names

test('bad stat name in the path (URL-encoded): 400 "contains invalid characters", nothing stored', async (t) => {
  const { user, key } = await keyed()
  for (const name of ['bad/name', 'a<b>', 'semi;colon', 'quote"', 'tab\tname', 'new\nline', 'dollar$', 'at@home', 'percent%']) {
    await rejected(
      t,
      user.accountId,
      () => request(app.url, `/api/v1/stats/${enc(name)}/count`, { json: { count: 1 }, bearer: key }),
      400,
      'invalid stat name: contains invalid characters',
      'invalid_stat_name',
    )
    await rejected(
      t,
      user.accountId,
      () => request(app.url, `/api/v1/stats/${enc(name)}/value`, { json: { value: 1 }, bearer: key }),
      400,
      'invalid stat name: contains invalid characters',
      'invalid_stat_name',
    )
  }
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/points', { json: { points: [{ stat: 'bad/name', count: 1 }] }, bearer: key }),
    400,
    'points[0]: invalid stat name: contains invalid characters',
    'invalid_stat_name',
  )
})

test('stat name longer than 128 characters is a 400; exactly 128 is accepted', async (t) => {
  const { user, key } = await keyed()
  await rejected(
    t,
    user.accountId,
    () => request(app.url, `/api/v1/stats/${'x'.repeat(129)}/count`, { json: { count: 1 }, bearer: key }),
    400,
    'invalid stat name: longer than 128 characters',
  )
  t.is((await request(app.url, `/api/v1/stats/${'x'.repeat(128)}/count`, { json: { count: 1 }, bearer: key })).status, 200)
})

test('allowed names: URL-encoded spaces, dots, hyphens, underscores and letters; "&" is silently removed', async (t) => {
  const { user, key } = await keyed()
  for (const name of ['web hits', 'api.v1-latency_ms', 'Zugriffe über Web']) {
    t.is((await request(app.url, `/api/v1/stats/${enc(name)}/count`, { json: { count: 1 }, bearer: key })).status, 200, name)
    t.truthy(await statRow(user.accountId, name), name)
  }
  t.is((await request(app.url, `/api/v1/stats/${enc('cats & dogs')}/count`, { json: { count: 1 }, bearer: key })).status, 200)
  t.truthy(await statRow(user.accountId, 'cats  dogs'))
  t.falsy(await statRow(user.accountId, 'cats & dogs'))
})

test('a malformed percent-escape in the stat name is a 400, not a server error', async (t) => {
  const { user, key } = await keyed()
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/bad%E0%A4%A/count', { json: { count: 1 }, bearer: key }),
    400,
    /./,
  )
})

// ---------------------------------------------------------------- kinds

test('type conflict: count to a gauge and value to a counter are 400 and store nothing', async (t) => {
  const { user, key } = await keyed()
  t.is((await request(app.url, '/api/v1/stats/hits/count', { json: { count: 1 }, bearer: key })).status, 200)
  t.is((await request(app.url, '/api/v1/stats/temp/value', { json: { value: 20 }, bearer: key })).status, 200)
  const a = await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/hits/value', { json: { value: 5 }, bearer: key }),
    400,
    /type conflict/,
    'kind_conflict',
  )
  t.regex(a.body.detail, /counter/)
  const b = await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/temp/count', { json: { count: 5 }, bearer: key }),
    400,
    /type conflict/,
    'kind_conflict',
  )
  t.regex(b.body.detail, /gauge/)
  t.is((await statRow(user.accountId, 'hits')).kind, 'counter')
  t.is((await statRow(user.accountId, 'temp')).kind, 'gauge')
  t.deepEqual(await valuesOf(user.accountId, 'hits'), [1])
  t.deepEqual(await valuesOf(user.accountId, 'temp'), [20])
})

// ---------------------------------------------------------------- t, ikey and replay

test('explicit t is stored; replay "sums_with_existing" on a counter and "averages_with_existing" on a gauge, never on a first write', async (t) => {
  const { user, key } = await keyed()
  const tt = nowS() - 3600
  const first = await request(app.url, '/api/v1/stats/orders/count', { json: { count: 2, t: tt }, bearer: key })
  t.deepEqual(first.body, { status: 'ok' })
  const g1 = await request(app.url, '/api/v1/stats/cpu/value', { json: { value: 10, t: tt }, bearer: key })
  t.deepEqual(g1.body, { status: 'ok' })
  await settle(app)
  const second = await request(app.url, '/api/v1/stats/orders/count', { json: { count: 3, t: tt }, bearer: key })
  t.deepEqual([second.status, second.body], [200, { status: 'ok', replay: 'sums_with_existing' }])
  const g2 = await request(app.url, '/api/v1/stats/cpu/value', { json: { value: 20, t: String(tt) }, bearer: key })
  t.deepEqual([g2.status, g2.body], [200, { status: 'ok', replay: 'averages_with_existing' }])
  // A different second of an existing stat is a first write there: no replay.
  const other = await request(app.url, '/api/v1/stats/orders/count', { json: { count: 1, t: tt - 1 }, bearer: key })
  t.deepEqual(other.body, { status: 'ok' })
  await settle(app)
  t.deepEqual(await valuesOf(user.accountId, 'orders'), [1, 2, 3], 'both observations at one second kept')
  t.deepEqual(await valuesOf(user.accountId, 'cpu'), [10, 20])
  const rows = await app.sql<{ t: number }[]>`
    select distinct extract(epoch from p.ts)::int as t from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${user.accountId} and s.name = 'cpu'`
  t.deepEqual(
    rows.map((r) => r.t),
    [tt],
  )
})

test('without t there is no replay field: each write gets its own arrival time', async (t) => {
  const { user, key } = await keyed()
  for (let i = 0; i < 3; i++)
    t.deepEqual((await request(app.url, '/api/v1/stats/noT/count', { json: { count: 1 }, bearer: key })).body, { status: 'ok' })
  await settle(app)
  t.deepEqual(await valuesOf(user.accountId, 'noT'), [1, 1, 1])
})

test('ikey with t: a retry is "duplicate_ignored", stored once and not billed; on both routes', async (t) => {
  const { user, key } = await keyed()
  const tt = nowS() - 120
  for (const [path, json] of [
    ['/api/v1/stats/paid/count', { count: 7, t: tt, ikey: 'order-1' }],
    ['/api/v1/stats/level/value', { value: 7, t: tt, ikey: 'reading-1' }],
  ] as const) {
    const first = await request(app.url, path, { json, bearer: key })
    t.deepEqual([first.status, first.body], [200, { status: 'ok' }])
    await settle(app)
    const before = await stored(app, user.accountId)
    const retry = await request(app.url, path, { json, bearer: key })
    t.deepEqual([retry.status, retry.body], [200, { status: 'ok', replay: 'duplicate_ignored' }])
    t.deepEqual(await snapshot(user.accountId), before, 'retry stored nothing and used no allowance')
  }
  t.deepEqual(await valuesOf(user.accountId, 'paid'), [7])
  t.deepEqual(await valuesOf(user.accountId, 'level'), [7])
  // The same ikey at another second, or another ikey at the same second, is a new observation.
  t.deepEqual((await request(app.url, '/api/v1/stats/paid/count', { json: { count: 1, t: tt - 5, ikey: 'order-1' }, bearer: key })).body, {
    status: 'ok',
  })
  t.deepEqual((await request(app.url, '/api/v1/stats/paid/count', { json: { count: 2, t: tt, ikey: 'order-2' }, bearer: key })).body, {
    status: 'ok',
    replay: 'sums_with_existing',
  })
  await settle(app)
  t.deepEqual(await valuesOf(user.accountId, 'paid'), [1, 2, 7])
})

test('ikey longer than 128 characters or not a string is a 400', async (t) => {
  const { user, key } = await keyed()
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/c/count', { json: { count: 1, ikey: 'k'.repeat(129) }, bearer: key }),
    400,
    'invalid ikey: longer than 128 characters',
  )
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/stats/c/count', { json: { count: 1, ikey: 12 }, bearer: key }),
    400,
    'invalid ikey: must be a string',
  )
  t.is((await request(app.url, '/api/v1/stats/c/count', { json: { count: 1, ikey: 'k'.repeat(128) }, bearer: key })).status, 200)
})

// ---------------------------------------------------------------- POST /api/v1/points

test("/api/v1/points: success {status, accepted, duplicates}; stats created with each point's kind; strings and numbers alike", async (t) => {
  const { user, key } = await keyed()
  const tt = nowS() - 600
  const res = await request(app.url, '/api/v1/points', {
    bearer: key,
    json: {
      points: [
        { stat: 'p.hits', count: 1 },
        { stat: 'p.hits', count: '2', t: tt },
        { stat: 'p.temp', value: 19.5, t: String(tt) },
        { stat: 'p.temp', value: '20.5' },
      ],
    },
  })
  t.is(res.status, 200)
  t.deepEqual(res.body, { status: 'ok', accepted: 4, duplicates: 0 })
  await settle(app)
  t.is((await statRow(user.accountId, 'p.hits')).kind, 'counter')
  t.is((await statRow(user.accountId, 'p.temp')).kind, 'gauge')
  t.deepEqual(await valuesOf(user.accountId, 'p.hits'), [1, 2])
  t.deepEqual(await valuesOf(user.accountId, 'p.temp'), [19.5, 20.5])
  t.is((await stored(app, user.accountId)).quotaUsed, 4)
})

test('/api/v1/points: one bad point -> 400 with errors [{index, detail}] and nothing of the batch stored', async (t) => {
  const { user, key } = await keyed()
  await request(app.url, '/api/v1/points', { bearer: key, json: { points: [{ stat: 'seed', count: 1 }] } })
  const points = [
    { stat: 'b.ok', count: 1 },
    { stat: 'b.new', count: 'abc' },
    { stat: 'seed', count: 2 },
  ]
  const res = await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/points', { bearer: key, json: { points } }),
    400,
    'points[1]: invalid count: not a number',
    'invalid_count',
  )
  t.like(res.body.errors, [{ index: 1, detail: 'invalid count: not a number' }])
  t.is(res.body.errors.length, 1)
  t.falsy(await statRow(user.accountId, 'b.ok'))
  t.deepEqual(await valuesOf(user.accountId, 'seed'), [1])
})

test('/api/v1/points: every bad point is listed by index with the interface message', async (t) => {
  const { user, key } = await keyed()
  const future = nowS() + 3600
  const points = [
    { stat: 'ok', count: 1 },
    { stat: 'x', count: 1e16 },
    { stat: 'y', value: null },
    { stat: 'z', count: 1, t: future },
    { stat: 'w', count: 1, t: 100 },
    { stat: 'bad/name', count: 1 },
    { stat: 'v', count: 1, value: 2 },
    { count: 1 },
  ]
  const res = await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/points', { bearer: key, json: { points } }),
    400,
    'points[1]: invalid count: out of range',
  )
  const byIndex = Object.fromEntries(res.body.errors.map((e: { index: number; detail: string }) => [e.index, e.detail]))
  t.deepEqual(Object.keys(byIndex).map(Number), [1, 2, 3, 4, 5, 6, 7])
  t.is(byIndex[1], 'invalid count: out of range')
  t.is(byIndex[2], 'invalid value: empty')
  t.is(byIndex[3], 'invalid timestamp: too far in the future')
  t.regex(byIndex[4], /^invalid timestamp: before 2000-01-01/)
  t.is(byIndex[5], 'invalid stat name: contains invalid characters')
  t.regex(byIndex[6], /count or value/)
  t.is(byIndex[7], 'invalid stat name: missing')
  t.is((await snapshot(user.accountId)).stats, 0)
})

test('/api/v1/points: a type conflict (with a stored stat or inside the batch) -> 400 with errors [{index, detail}], nothing stored', async (t) => {
  const { user, key } = await keyed()
  t.is((await request(app.url, '/api/v1/stats/kc.counter/count', { json: { count: 1 }, bearer: key })).status, 200)
  const stored1 = await rejected(
    t,
    user.accountId,
    () =>
      request(app.url, '/api/v1/points', {
        bearer: key,
        json: {
          points: [
            { stat: 'kc.new', count: 1 },
            { stat: 'kc.counter', value: 3 },
          ],
        },
      }),
    400,
    /^points\[1\]: type conflict/,
    'kind_conflict',
  )
  t.like(stored1.body.errors, [{ index: 1 }])
  const inBatch = await rejected(
    t,
    user.accountId,
    () =>
      request(app.url, '/api/v1/points', {
        bearer: key,
        json: {
          points: [
            { stat: 'kc.mixed', count: 1 },
            { stat: 'kc.other', count: 1 },
            { stat: 'kc.mixed', value: 3 },
          ],
        },
      }),
    400,
    /^points\[2\]: type conflict/,
    'kind_conflict',
  )
  t.like(inBatch.body.errors, [{ index: 2 }])
  t.falsy(await statRow(user.accountId, 'kc.new'))
  t.falsy(await statRow(user.accountId, 'kc.mixed'))
})

test('/api/v1/points: more than 1,000 points -> 400 and nothing stored; exactly 1,000 are accepted', async (t) => {
  const { user, key } = await keyed()
  const tt = nowS() - 60
  const many = (n: number) => Array.from({ length: n }, (_, i) => ({ stat: `s${i % 3}`, count: 1, t: tt }))
  await rejected(
    t,
    user.accountId,
    () => request(app.url, '/api/v1/points', { bearer: key, json: { points: many(1001) } }),
    400,
    'body.points: at most 1000 points per request',
    'validation_failed',
  )
  const ok = await request(app.url, '/api/v1/points', { bearer: key, json: { points: many(1000) } })
  t.deepEqual([ok.status, ok.body], [200, { status: 'ok', accepted: 1000, duplicates: 0 }])
  const after = await snapshot(user.accountId)
  t.is(after.points, 1000)
  t.is(after.quotaUsed, 1000)
})

test('/api/v1/points: duplicates by ikey are counted and not stored (within a batch and on a resend)', async (t) => {
  const { user, key } = await keyed()
  const tt = nowS() - 300
  const points = [
    { stat: 'dup', count: 1, t: tt, ikey: 'a' },
    { stat: 'dup', count: 2, t: tt, ikey: 'b' },
    { stat: 'dup', count: 4, t: tt, ikey: 'a' }, // same stat, t and ikey as the first: the first wins
    { stat: 'dup', count: 8, t: tt },
  ]
  const first = await request(app.url, '/api/v1/points', { bearer: key, json: { points } })
  t.deepEqual([first.status, first.body], [200, { status: 'ok', accepted: 4, duplicates: 1 }])
  await settle(app)
  t.deepEqual(await valuesOf(user.accountId, 'dup'), [1, 2, 8])
  const resend = await request(app.url, '/api/v1/points', { bearer: key, json: { points: points.slice(0, 3) } })
  t.deepEqual([resend.status, resend.body], [200, { status: 'ok', accepted: 3, duplicates: 3 }])
  await settle(app)
  t.deepEqual(await valuesOf(user.accountId, 'dup'), [1, 2, 8])
})

test('/api/v1/points: an empty list is accepted and stores nothing', async (t) => {
  const { user, key } = await keyed()
  const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points: [] } })
  t.deepEqual([res.status, res.body], [200, { status: 'ok', accepted: 0, duplicates: 0 }])
  t.deepEqual(await snapshot(user.accountId), { stats: 0, points: 0, queued: 0, quotaUsed: 0 })
})
