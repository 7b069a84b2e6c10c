import test from 'ava'
import { setTimeout as sleep } from 'node:timers/promises'
import { LEASE_MS } from '../../shared/ingest/limits.js'
import { createRedis, redisKey } from '../../shared/redis.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { closedPort, request } from '../helpers/http.js'
import { settle, stored } from '../helpers/storage.js'

const app = appSuite({ workers: true })

async function proUser() {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  return { user, key: (await createKey(app.url, user)).key }
}

const sumOf = async (accountId: string, name: string) =>
  (
    await app.sql<{ n: number; s: number }[]>`
    select count(*)::int as n, coalesce(sum(value), 0) as s from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${accountId} and s.name = ${name}`
  )[0]

test('many parallel writers to one stat: every accepted point is stored exactly once', async (t) => {
  const { user, key } = await proUser()
  const other = await app.another()
  const results = await Promise.all(
    Array.from({ length: 400 }, (_, i) => request(i % 2 ? app.url : other.url, '/ez', { form: `ezkey=${key}&stat=hot&count=1` })),
  )
  const ok = results.filter((r) => r.status === 200 && r.body.status === 200).length
  t.is(ok, 400)
  await settle(app)
  t.deepEqual(await sumOf(user.accountId, 'hot'), { n: 400, s: 400 })
})

test("a busy writer's single points are decided in memory (leased allowance, cached stat), and every rule holds: stored once each, counted exactly, a kind conflict refused, a deleted stat not written", async (t) => {
  const { user, key } = await proUser()
  const limits = app.api.deps.limits
  const write = (stat: string, field = 'count=1') => request(app.url, '/ez', { form: `ezkey=${key}&stat=${stat}&${field}` })
  t.is((await write('busy')).body.status, 200) // the stat exists and is cached before the burst
  const callsBefore = limits.redisCalls
  const burst = []
  for (let wave = 0; wave < 10; wave++) burst.push(...(await Promise.all(Array.from({ length: 30 }, () => write('busy')))))
  t.true(burst.every((r) => r.status === 200 && r.body.status === 200))
  // Unleased, each write costs two Redis calls (a token, a point): most of these were decided in memory.
  t.true(
    limits.redisCalls - callsBefore < 150,
    `the allowance was leased and spent in memory (${limits.redisCalls - callsBefore} Redis calls for 300 writes)`,
  )
  // The stat and a lease are in memory, yet a gauge value to the counter is refused, and a point with t takes the long way.
  const conflict = await write('busy', 'value=3')
  t.is(conflict.status, 400)
  t.regex(String(conflict.body.msg), /type conflict/)
  t.is((await write('busy', `count=1&t=${Math.floor(Date.now() / 1000)}`)).body.status, 200)
  await settle(app)
  t.deepEqual(await sumOf(user.accountId, 'busy'), { n: 302, s: 302 })
  await sleep(2 * LEASE_MS + 100) // the lease ends, its leftovers go back
  const redis = createRedis(app.config)
  try {
    t.is(
      Number(await redis.get(redisKey(app.config, 'points', user.accountId, new Date().toISOString().slice(0, 10)))),
      302,
      "the day's counter is exact",
    )
  } finally {
    redis.disconnect()
  }
  // A delete evicts the cached stat: the next writes create a new one, and the old one takes nothing.
  const [old] = await app.sql<{ id: string }[]>`select id from stats where account_id = ${user.accountId} and name = 'busy'`
  t.is((await request(app.url, '/api/v1/stats/busy', { method: 'DELETE', bearer: key })).status, 204)
  const after = await Promise.all(Array.from({ length: 50 }, () => write('busy')))
  t.true(after.every((r) => r.body.status === 200))
  await settle(app)
  t.deepEqual(await sumOf(user.accountId, 'busy'), { n: 50, s: 50 })
  t.is((await app.sql`select count(*)::int as n from points where stat_id = ${old.id}`)[0].n, 0)
})

test('3.1 kind race: concurrent first writes of different kinds end with exactly one kind accepted', async (t) => {
  const { user, key } = await proUser()
  const results = await Promise.all(
    Array.from({ length: 30 }, (_, i) => request(app.url, '/ez', { form: `ezkey=${key}&stat=contested&${i % 2 ? 'count' : 'value'}=1` })),
  )
  const [stat] = await app.sql<{ kind: string }[]>`select kind from stats where account_id = ${user.accountId} and name = 'contested'`
  const accepted = results.filter((r) => r.body.status === 200)
  const refused = results.filter((r) => r.body.status === 'error')
  t.is(accepted.length + refused.length, 30)
  for (const r of refused) {
    t.is(r.status, 400)
    t.regex(r.body.msg, /type conflict/)
  }
  await settle(app)
  const { n } = await sumOf(user.accountId, 'contested')
  t.is(n, accepted.length)
  t.true(['counter', 'gauge'].includes(stat.kind))
})

test('two worker processes on one queue store every point exactly once', async (t) => {
  await app.startWorkers() // a second set of workers on the same queues
  const { user, key } = await proUser()
  const batches = Array.from({ length: 20 }, (_, b) => ({
    ezkey: key,
    data: Array.from({ length: 100 }, (_, i) => ({ stat: `w${i % 5}`, count: 1, t: Math.floor(Date.now() / 1000) - 3600 + b })),
  }))
  const res = await Promise.all(batches.map((json) => request(app.url, '/ez', { json })))
  t.true(res.every((r) => r.body.accepted === 100))
  await settle(app)
  const s = await stored(app, user.accountId)
  t.is(s.points, 2000)
  t.is(s.quotaUsed, 2000)
})

test('Redis down: legacy default 200 with status error, strict 503, v1 503, and nothing is stored', async (t) => {
  const { user, key } = await proUser()
  const broken = await app.another({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` })
  const before = await stored(app, user.accountId)
  const legacy = await request(broken.url, '/ez', { form: `ezkey=${key}&stat=down&count=1` })
  t.is(legacy.status, 200)
  t.is(legacy.body.status, 'error')
  const strict = await request(broken.url, '/ez', { form: `ezkey=${key}&stat=down&count=1`, headers: { 'x-service-strict': '1' } })
  t.is(strict.status, 503)
  t.is(strict.body.status, 'error')
  const v1 = await request(broken.url, '/api/v1/stats/down/count', { json: { count: 1 }, bearer: key })
  t.is(v1.status, 503)
  t.is(v1.body.code, 'unavailable')
  t.deepEqual(await stored(app, user.accountId), before)
  // Reads need nothing of Redis but the rate count: they are answered, uncounted (reads answered
  // throughout a Redis failover).
  const list = await request(broken.url, '/api/v1/stats', { bearer: key })
  t.is(list.status, 200)
  t.is(list.headers.get('ratelimit-limit'), null, 'no rate headers: the request was not counted')
  t.is((await request(broken.url, '/api/v1/export?format=csv', { bearer: key })).status, 200)
})
