// Plan limits (docs/decisions.md §I-1, §I-4.1.4, §I-7, §I-8; §1 and §5): tracked
// stats, daily points, free-tier slots, billing of retries, and the request rate.
import test, { type ExecutionContext } from 'ava'
import type { Redis } from 'ioredis'
import { createRedis, redisKey } from '../../shared/redis.js'
import type { TestApp } from '../helpers/app.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { settle, stored, type Stored } from '../helpers/storage.js'

const app = appSuite({ workers: true })
/** A deployment with a single free-tier slot (FREE_TIER_SLOTS=1), its own database. */
const slotApp = appSuite({ workers: true, env: { FREE_TIER_SLOTS: '1' } })
let redis: Redis

test.before(() => {
  redis = createRedis(app.config)
})
test.after.always(() => redis?.disconnect())

const nowS = () => Math.floor(Date.now() / 1000)
const today = () => new Date().toISOString().slice(0, 10)

async function keyed(on: TestApp = app, plan?: string): Promise<{ user: User; key: string }> {
  const user = await signUp(on.url)
  if (plan) await on.sql`update accounts set plan = ${plan} where id = ${user.accountId}` // before the key's first use
  return { user, key: (await createKey(on.url, user)).key }
}

async function snapshot(accountId: string, on: TestApp = app): Promise<Stored> {
  await settle(on)
  return stored(on, accountId)
}

function isProblem(t: ExecutionContext, res: Reply, status: number, code: string, detail?: string | RegExp): void {
  t.is(res.status, status, res.text)
  t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/)
  t.is(res.body?.status, status)
  t.is(res.body?.code, code)
  if (typeof detail === 'string') t.is(res.body?.detail, detail)
  else if (detail) t.regex(String(res.body?.detail), detail)
}

/** A rejection must leave stats, points, queued points and the allowance exactly as they were. */
async function unchanged<T>(t: ExecutionContext, accountId: string, send: () => Promise<T>, on: TestApp = app): Promise<T> {
  const before = await snapshot(accountId, on)
  const res = await send()
  t.deepEqual(await snapshot(accountId, on), before, 'nothing stored, no allowance used')
  return res
}

const v1Count = (on: TestApp, key: string, stat: string, json: Record<string, unknown> = { count: 1 }) =>
  request(on.url, `/api/v1/stats/${encodeURIComponent(stat)}/count`, { json, bearer: key })
const ez = (on: TestApp, key: string, stat: string, strict = false) =>
  request(on.url, '/ez', {
    form: `ezkey=${key}&stat=${encodeURIComponent(stat)}&count=1`,
    headers: strict ? { 'x-service-strict': '1' } : {},
  })

// ---------------------------------------------------------------- tracked stats

test('free plan: 10 tracked stats; the 11th stat is 403 stat_limit on v1, 200 "error" on /ez, 429 on strict /ez; nothing stored', async (t) => {
  const { user, key } = await keyed()
  for (let i = 1; i <= 10; i++) t.is((await v1Count(app, key, `stat ${i}`)).status, 200)
  const limit = 'plan limit reached: the free plan tracks at most 10 stats'

  const v1 = await unchanged(t, user.accountId, () => v1Count(app, key, 'stat 11'))
  isProblem(t, v1, 403, 'stat_limit', limit)
  const gauge = await unchanged(t, user.accountId, () =>
    request(app.url, '/api/v1/stats/stat%2011/value', { json: { value: 1 }, bearer: key }),
  )
  isProblem(t, gauge, 403, 'stat_limit', limit)

  const legacy = await unchanged(t, user.accountId, () => ez(app, key, 'stat 11'))
  t.is(legacy.status, 200)
  t.is(legacy.body.status, 'error')
  t.is(legacy.body.msg, limit)

  const strict = await unchanged(t, user.accountId, () => ez(app, key, 'stat 11', true))
  t.is(strict.status, 429)
  t.is(strict.body.status, 'error')
  t.is(strict.body.msg, limit)

  // /api/v1/points checks the whole batch before storing: the point for an existing stat is not stored either.
  const batch = await unchanged(t, user.accountId, () =>
    request(app.url, '/api/v1/points', {
      bearer: key,
      json: {
        points: [
          { stat: 'stat 1', count: 1 },
          { stat: 'stat 11', count: 1 },
        ],
      },
    }),
  )
  isProblem(t, batch, 403, 'stat_limit', limit)

  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from stats where account_id = ${user.accountId}`
  t.is(n, 10)
})

test('free plan: writing to an existing stat after the limit still works', async (t) => {
  const { user, key } = await keyed()
  for (let i = 1; i <= 10; i++) t.is((await v1Count(app, key, `s${i}`)).status, 200)
  isProblem(t, await v1Count(app, key, 's11'), 403, 'stat_limit')
  const again = await v1Count(app, key, 's3', { count: 5 })
  t.deepEqual([again.status, again.body], [200, { status: 'ok' }])
  const legacy = await ez(app, key, 's4')
  t.deepEqual([legacy.status, legacy.body.status], [200, 200])
  const batch = await request(app.url, '/api/v1/points', {
    bearer: key,
    json: {
      points: [
        { stat: 's1', count: 1 },
        { stat: 's10', count: 2 },
      ],
    },
  })
  t.deepEqual(batch.body, { status: 'ok', accepted: 2, duplicates: 0 })
  const after = await snapshot(user.accountId)
  t.is(after.stats, 10)
  t.is(after.points, 14)
  t.is(after.quotaUsed, 14)
})

test('a paid plan tracks more than 10 stats', async (t) => {
  const { user, key } = await keyed(app, 'starter')
  const res = await request(app.url, '/api/v1/points', {
    bearer: key,
    json: { points: Array.from({ length: 25 }, (_, i) => ({ stat: `p${i}`, count: 1 })) },
  })
  t.deepEqual([res.status, res.body], [200, { status: 'ok', accepted: 25, duplicates: 0 }])
  t.is((await snapshot(user.accountId)).stats, 25)
})

// ---------------------------------------------------------------- daily points

async function setDayCounter(accountId: string, used: number): Promise<void> {
  await redis.set(redisKey(app.config, 'points', accountId, today()), String(used), 'EX', 2 * 86_400)
}

test('daily points: a free account at 100,000 points today gets 403 daily_point_limit on v1 and 200 "error" on /ez; nothing stored', async (t) => {
  const { user, key } = await keyed()
  t.is((await v1Count(app, key, 'daily')).status, 200) // the stat exists and the slot is claimed
  await setDayCounter(user.accountId, 100_000)
  const limit = 'plan limit reached: the free plan records at most 100000 points per day'
  isProblem(t, await unchanged(t, user.accountId, () => v1Count(app, key, 'daily')), 403, 'daily_point_limit', limit)
  isProblem(
    t,
    await unchanged(t, user.accountId, () => request(app.url, '/api/v1/stats/gauge/value', { json: { value: 1 }, bearer: key })),
    403,
    'daily_point_limit',
    limit,
  )
  isProblem(
    t,
    await unchanged(t, user.accountId, () =>
      request(app.url, '/api/v1/points', { bearer: key, json: { points: [{ stat: 'daily', count: 1 }] } }),
    ),
    403,
    'daily_point_limit',
    limit,
  )
  const legacy = await unchanged(t, user.accountId, () => ez(app, key, 'daily'))
  t.deepEqual([legacy.status, legacy.body.status, legacy.body.msg], [200, 'error', limit])
  const strict = await unchanged(t, user.accountId, () => ez(app, key, 'daily', true))
  t.deepEqual([strict.status, strict.body.status], [429, 'error'])
  t.is((await stored(app, user.accountId)).quotaUsed, 100_000)
  t.falsy(
    (await app.sql`select 1 from stats where account_id = ${user.accountId} and name = 'gauge'`)[0],
    'a rejection never creates a stat',
  )
})

test('daily points: the last points of the allowance are accepted, the next one is refused', async (t) => {
  const { user, key } = await keyed()
  await setDayCounter(user.accountId, 99_999)
  t.is((await v1Count(app, key, 'edge')).status, 200)
  t.is((await stored(app, user.accountId)).quotaUsed, 100_000)
  isProblem(t, await unchanged(t, user.accountId, () => v1Count(app, key, 'edge')), 403, 'daily_point_limit')
})

test('daily points: /api/v1/points is all-or-nothing: a batch that does not fit is 403, nothing stored and no allowance used', async (t) => {
  const { user, key } = await keyed()
  t.is((await v1Count(app, key, 'kept')).status, 200)
  await setDayCounter(user.accountId, 99_998)
  const before = await snapshot(user.accountId)
  const points = [
    { stat: 'kept', count: 1 },
    { stat: 'new one', count: 1 },
    { stat: 'kept', count: 1 },
  ]
  const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points } })
  isProblem(t, res, 403, 'daily_point_limit')
  const after = await snapshot(user.accountId)
  t.deepEqual(after, before)
  t.is(after.quotaUsed, 99_998, 'no allowance used')
  t.falsy((await app.sql`select 1 from stats where account_id = ${user.accountId} and name = 'new one'`)[0])
  // Two points do fit.
  const fits = await request(app.url, '/api/v1/points', { bearer: key, json: { points: points.slice(0, 2) } })
  t.deepEqual(fits.body, { status: 'ok', accepted: 2, duplicates: 0 })
  t.is((await snapshot(user.accountId)).quotaUsed, 100_000)
})

test('daily points: a rejected write of another kind (malformed input) uses no allowance', async (t) => {
  const { user, key } = await keyed()
  t.is((await v1Count(app, key, 'm')).status, 200)
  const res = await unchanged(t, user.accountId, () => v1Count(app, key, 'm', { count: 'abc' }))
  t.is(res.status, 400)
  t.is((await stored(app, user.accountId)).quotaUsed, 1)
})

// ---------------------------------------------------------------- billing of retries

test('a deduplicated single-point retry (same t and ikey) is not billed', async (t) => {
  const { user, key } = await keyed()
  const tt = nowS() - 60
  for (const send of [
    () => v1Count(app, key, 'billing', { count: 1, t: tt, ikey: 'op-1' }),
    () => request(app.url, '/ez', { form: `ezkey=${key}&stat=billing&count=1&t=${tt}&ikey=op-2` }),
  ]) {
    t.is((await send()).status, 200)
    const before = await snapshot(user.accountId)
    const retry = await send()
    t.is(retry.status, 200)
    t.is(retry.body.replay, 'duplicate_ignored')
    t.deepEqual(await snapshot(user.accountId), before, 'not stored and not billed again')
  }
  t.is((await stored(app, user.accountId)).quotaUsed, 2)
})

test('a retried batch (/api/v1/points and the /ez JSON batch) is billed again per item, though its points are stored once', async (t) => {
  const { user, key } = await keyed()
  const tt = nowS() - 60
  const items = [1, 2, 3].map((i) => ({ stat: 'batched', count: i, t: tt, ikey: `b-${i}` }))

  t.deepEqual((await request(app.url, '/api/v1/points', { bearer: key, json: { points: items } })).body, {
    status: 'ok',
    accepted: 3,
    duplicates: 0,
  })
  t.deepEqual((await request(app.url, '/api/v1/points', { bearer: key, json: { points: items } })).body, {
    status: 'ok',
    accepted: 3,
    duplicates: 3,
  })
  let now = await snapshot(user.accountId)
  t.is(now.points, 3)
  t.is(now.quotaUsed, 6)

  const ezItems = [4, 5].map((i) => ({ stat: 'batched', count: i, t: String(tt), ikey: `e-${i}` }))
  t.is((await request(app.url, '/ez', { json: { ezkey: key, data: ezItems } })).body.status, 200)
  t.is((await request(app.url, '/ez', { json: { ezkey: key, data: ezItems } })).body.status, 200)
  now = await snapshot(user.accountId)
  t.is(now.points, 5)
  t.is(now.quotaUsed, 10)
})

// ---------------------------------------------------------------- free-tier slots (FREE_TIER_SLOTS=1)

const slotsClaimed = async () => (await slotApp.sql<{ claimed: number }[]>`select claimed from free_tier`)[0].claimed

test.serial(
  "free-tier slots: the first free account's first point claims the only slot; a second free account gets the quota rejection on every write",
  async (t) => {
    const first = await keyed(slotApp)
    const second = await keyed(slotApp)
    t.is(await slotsClaimed(), 0, 'signing up and creating a key claim nothing')

    const ok = await v1Count(slotApp, first.key, 'first')
    t.deepEqual([ok.status, ok.body], [200, { status: 'ok' }])
    t.is(await slotsClaimed(), 1)
    const [row] = await slotApp.sql<
      { claimed_at: Date | null }[]
    >`select free_slot_claimed_at as claimed_at from accounts where id = ${first.user.accountId}`
    t.truthy(row.claimed_at)

    const full = /^free tier is full/
    for (const send of [
      () => v1Count(slotApp, second.key, 'second'),
      () => request(slotApp.url, '/api/v1/stats/second/value', { json: { value: 1 }, bearer: second.key }),
      () => request(slotApp.url, '/api/v1/points', { bearer: second.key, json: { points: [{ stat: 'second', count: 1 }] } }),
      () => request(slotApp.url, '/api/v1/stats/second/count', { json: { count: 1 }, session: second.user.session }),
    ]) {
      isProblem(t, await unchanged(t, second.user.accountId, send, slotApp), 403, 'free_tier_full', full)
    }
    const legacy = await unchanged(t, second.user.accountId, () => ez(slotApp, second.key, 'second'), slotApp)
    t.deepEqual([legacy.status, legacy.body.status], [200, 'error'])
    t.regex(legacy.body.msg, full)
    const strict = await unchanged(t, second.user.accountId, () => ez(slotApp, second.key, 'second', true), slotApp)
    t.deepEqual([strict.status, strict.body.status], [429, 'error'])
    const batch = await unchanged(
      t,
      second.user.accountId,
      () => request(slotApp.url, '/ez', { json: { ezkey: second.key, data: [{ stat: 'second', count: 1 }] } }),
      slotApp,
    )
    t.deepEqual([batch.status, batch.body.status], [200, 'error'])
    t.deepEqual(await snapshot(second.user.accountId, slotApp), { stats: 0, points: 0, queued: 0, quotaUsed: 0 })
    t.is(await slotsClaimed(), 1)

    // The slot holder keeps writing, in a second process too.
    t.is((await v1Count(slotApp, first.key, 'first')).status, 200)
    const other = await slotApp.another({ FREE_TIER_SLOTS: '1' })
    t.is((await v1Count(other, first.key, 'first')).status, 200)
    isProblem(t, await v1Count(other, second.key, 'second'), 403, 'free_tier_full')
    t.is((await snapshot(first.user.accountId, slotApp)).points, 3)

    // Upgrading lifts the rejection for the second account (the key cache holds the account up to 500 ms).
    await slotApp.sql`update accounts set plan = 'starter' where id = ${second.user.accountId}`
    await new Promise((r) => setTimeout(r, 600))
    t.is((await v1Count(slotApp, second.key, 'second')).status, 200)
    t.is(await slotsClaimed(), 1, 'a paid account takes no free slot')
  },
)

test.serial('free-tier slots: a paid account writes fine when every free slot is taken', async (t) => {
  const paid = await keyed(slotApp, 'pro')
  // Make sure the only slot is taken whatever ran before.
  const holder = await keyed(slotApp)
  await v1Count(slotApp, holder.key, 'x')
  t.is(await slotsClaimed(), 1)
  t.deepEqual((await v1Count(slotApp, paid.key, 'paid')).body, { status: 'ok' })
  t.deepEqual(
    (
      await request(slotApp.url, '/api/v1/points', {
        bearer: paid.key,
        json: {
          points: [
            { stat: 'paid', count: 1 },
            { stat: 'other', value: 2 },
          ],
        },
      })
    ).body,
    { status: 'ok', accepted: 2, duplicates: 0 },
  )
  t.deepEqual((await ez(slotApp, paid.key, 'paid')).body, { status: 200, msg: 'ok' })
  t.is((await snapshot(paid.user.accountId, slotApp)).points, 4)
  t.is(await slotsClaimed(), 1)
})

// ---------------------------------------------------------------- request rate

/** Empties the account's token bucket (shared by every API process through Redis). */
async function exhaust(accountId: string): Promise<void> {
  // ts slightly ahead so that no token trickles back before the next request is counted.
  await redis.hset(redisKey(app.config, 'rate', accountId), 't', '0', 'ts', String(Date.now() + 5_000))
  await redis.pexpire(redisKey(app.config, 'rate', accountId), 60_000)
}

test('rate limit: successful v1 answers carry RateLimit-Limit, -Remaining and -Reset', async (t) => {
  const { key } = await keyed()
  const res = await request(app.url, '/api/v1/stats', { bearer: key })
  t.is(res.status, 200)
  t.is(res.headers.get('ratelimit-limit'), '100')
  const remaining = Number(res.headers.get('ratelimit-remaining'))
  t.true(remaining >= 98 && remaining <= 99, `remaining ${remaining}`)
  t.regex(res.headers.get('ratelimit-reset') ?? '', /^\d+$/)
  const paid = await keyed(app, 'starter')
  t.is((await request(app.url, '/api/v1/stats', { bearer: paid.key })).headers.get('ratelimit-limit'), '500')
})

test.serial('rate limit: the free plan allows a burst of 100 requests, then 429', async (t) => {
  const { key } = await keyed()
  const started = Date.now()
  const replies = await Promise.all(Array.from({ length: 250 }, () => request(app.url, '/api/v1/stats', { bearer: key })))
  const elapsed = (Date.now() - started) / 1000
  const ok = replies.filter((r) => r.status === 200).length
  const limited = replies.filter((r) => r.status === 429)
  t.is(ok + limited.length, 250)
  t.true(ok >= 100, `${ok} allowed`)
  t.true(ok <= 100 + Math.ceil(20 * elapsed) + 1, `${ok} allowed in ${elapsed}s at 20/s after a burst of 100`)
  t.true(limited.length > 0)
  for (const r of limited) isProblem(t, r, 429, 'rate_limited')
})

test('rate limit: an exhausted budget is 429 with Retry-After and RateLimit-* headers on v1; nothing stored', async (t) => {
  const { user, key } = await keyed()
  t.is((await v1Count(app, key, 'rl')).status, 200)
  for (const send of [
    () => v1Count(app, key, 'rl'),
    () => request(app.url, '/api/v1/points', { bearer: key, json: { points: [{ stat: 'rl', count: 1 }] } }),
    () => request(app.url, '/api/v1/stats', { bearer: key }),
  ]) {
    await exhaust(user.accountId)
    const res = await unchanged(t, user.accountId, send)
    isProblem(t, res, 429, 'rate_limited')
    t.regex(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/)
    t.is(res.headers.get('ratelimit-limit'), '100')
    t.is(res.headers.get('ratelimit-remaining'), '0')
    t.true(Number(res.headers.get('ratelimit-reset')) >= 1)
  }
})

test('rate limit: /ez answers 429 in default mode (and in strict mode)', async (t) => {
  const { user, key } = await keyed()
  t.is((await ez(app, key, 'rl')).body.status, 200)
  await exhaust(user.accountId)
  const res = await unchanged(t, user.accountId, () => ez(app, key, 'rl'))
  t.is(res.status, 429)
  t.is(res.body.status, 'error')
  t.regex(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/)
  await exhaust(user.accountId)
  t.is((await ez(app, key, 'rl', true)).status, 429)
})

test.serial('rate limit: two API processes share one budget', async (t) => {
  const other = await app.another()
  const { user, key } = await keyed()
  // Exhausted through Redis: the other process refuses too.
  await exhaust(user.accountId)
  isProblem(t, await request(other.url, '/api/v1/stats', { bearer: key }), 429, 'rate_limited')
  await redis.del(redisKey(app.config, 'rate', user.accountId))

  // 125 requests to each process: together they get one burst of 100, not two.
  const started = Date.now()
  const replies = await Promise.all(
    Array.from({ length: 250 }, (_, i) => request(i % 2 ? app.url : other.url, '/api/v1/stats', { bearer: key })),
  )
  const elapsed = (Date.now() - started) / 1000
  const ok = replies.filter((r) => r.status === 200).length
  t.true(ok >= 100, `${ok} allowed`)
  t.true(ok <= 100 + Math.ceil(20 * elapsed) + 1, `${ok} allowed across two processes in ${elapsed}s`)
  t.true(
    replies.some((r, i) => i % 2 === 0 && r.status === 429),
    'the other process refused some',
  )
  t.true(
    replies.some((r, i) => i % 2 === 1 && r.status === 429),
    'this process refused some',
  )
})
