// The per-account limits against a real Redis, with two Limits objects
// standing for two API processes sharing one budget.
import test from 'ava'
import { randomBytes, randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { LEASE_MS, Limits } from '../../shared/ingest/limits.js'
import { PLANS } from '../../shared/plans.js'
import { createRedis, deleteKeys, redisKey } from '../../shared/redis.js'
import { closedPort } from '../helpers/http.js'

const config = { redisPrefix: `limits-test-${randomBytes(4).toString('hex')}` }
const redis = createRedis({ redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379' })
const processes: Array<{ limits: Limits; connection: Redis }> = []
/** Two Limits, each with its own connection, as two API processes would have. */
const twoProcesses = (now?: () => number) =>
  [0, 1].map(() => {
    const connection = createRedis({ redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379' })
    const limits = new Limits(connection, config, now)
    processes.push({ limits, connection })
    return limits
  })
const dayKey = (accountId: string) => redisKey(config, 'points', accountId, new Date().toISOString().slice(0, 10))
const used = async (accountId: string) => Number((await redis.get(dayKey(accountId))) ?? 0)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test.after.always(async () => {
  await Promise.all(processes.map((p) => p.limits.close()))
  for (const p of processes) p.connection.disconnect()
  await deleteKeys(redis, `${config.redisPrefix}:*`)
  redis.disconnect()
})

/**
 * Single-point writes of one business account through two processes, in waves of concurrent writes:
 * each takes a request token, then reserves its point. Counts the Redis round trips the two made.
 */
async function writeInWaves(account: string, o: { waves: number; perProcess: number; pauseMs: number }) {
  const [a, b] = twoProcesses()
  const plan = PLANS.business
  let granted = 0
  let requests = 0
  const before = a.redisCalls + b.redisCalls
  for (let w = 0; w < o.waves; w++) {
    const wave = await Promise.all(
      [a, b].flatMap((l) =>
        Array.from({ length: o.perProcess }, async () => {
          const rate = await l.takeRequest(account, plan)
          return rate.allowed ? l.reservePoints(account, plan, 1, true) : 0
        }),
      ),
    )
    requests += wave.length
    granted += wave.reduce((s, n) => s + n, 0)
    if (o.pauseMs) await sleep(o.pauseMs)
  }
  return { requests, granted, calls: a.redisCalls + b.redisCalls - before }
}

test('a light user is decided in Redis request by request: no lease, nothing taken ahead', async (t) => {
  const [a] = twoProcesses()
  const account = randomUUID()
  for (let i = 0; i < 5; i++) {
    t.is(await a.reservePoints(account, PLANS.free, 1, true), 1)
    t.is(await used(account), i + 1, 'the day counter holds exactly the points granted')
    await sleep(300)
  }
})

test('a busy account is served from leases: far fewer Redis round trips than requests, within one shared budget', async (t) => {
  const account = randomUUID()
  // 4,000 requests in waves of 50 concurrent writes per process, like a web process under load: within the
  // business plan's burst of 10,000.
  const { requests, granted, calls } = await writeInWaves(account, { waves: 40, perProcess: 50, pauseMs: 0 })
  t.is(granted, requests, 'every request fit in the business budget')
  t.true(calls < requests / 4, `${calls} Redis round trips for ${requests} requests`)
  // Unused leased points go back to the day once their lease ends.
  await sleep(2 * LEASE_MS + 100) // the lease ends, the next sweep gives its leftovers back
  t.is(await used(account), granted)
})

test('concurrent writers below the rate threshold lease too, and two processes still grant exactly one shared budget', async (t) => {
  const account = randomUUID()
  // About 20 requests a second per process, half the rate that leases on its own, but two at a time.
  const { requests, granted, calls } = await writeInWaves(account, { waves: 20, perProcess: 2, pauseMs: 100 })
  t.is(granted, requests)
  t.true(calls < requests, `${calls} Redis round trips for ${requests} requests (two each without leases)`)
  await sleep(2 * LEASE_MS + 100) // leases end, their leftovers go back
  t.is(await used(account), granted, 'the day counter holds exactly the points granted')
})

test('near the daily limit nothing is leased: two processes grant exactly the points that are left', async (t) => {
  const [a, b] = twoProcesses()
  const account = randomUUID()
  const plan = PLANS.free
  // Warm both processes up with enough demand that they would lease if they could.
  for (let i = 0; i < 3; i++)
    await Promise.all([a, b].flatMap((l) => Array.from({ length: 40 }, () => l.reservePoints(account, plan, 1, true))))
  await sleep(2 * LEASE_MS + 100) // leases end, their leftovers go back
  await redis.set(dayKey(account), String(plan.pointsPerDay - 50))
  const results = await Promise.all([a, b].flatMap((l) => Array.from({ length: 60 }, () => l.reservePoints(account, plan, 1, true))))
  t.is(
    results.reduce((s, n) => s + n, 0),
    50,
  )
  t.is(await used(account), plan.pointsPerDay)
  t.is(await a.reservePoints(account, plan, 1, true), 0)
})

test('the request rate is one budget across processes: a burst, then refusals, never more than the bucket refills', async (t) => {
  const [a, b] = twoProcesses()
  const account = randomUUID()
  const plan = PLANS.free
  const started = Date.now()
  const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).takeRequest(account, plan)))
  const elapsed = (Date.now() - started) / 1000
  const allowed = decisions.filter((d) => d.allowed).length
  t.true(allowed >= plan.burst, `${allowed} allowed`)
  t.true(allowed <= plan.burst + Math.ceil(plan.requestsPerSecond * elapsed) + 1, `${allowed} allowed in ${elapsed}s`)
  const refused = decisions.find((d) => !d.allowed)
  t.truthy(refused)
  t.is(refused?.remaining, 0)
  t.true((refused?.resetSeconds ?? 0) >= 1)
})

test('an emptied bucket refuses at once, even in a process that was just busy', async (t) => {
  const [a] = twoProcesses()
  const account = randomUUID()
  const plan = PLANS.business
  for (let i = 0; i < 5; i++) await Promise.all(Array.from({ length: 100 }, () => a.takeRequest(account, plan)))
  await sleep(LEASE_MS + 50) // any lease the process held has ended
  await redis.hset(redisKey(config, 'rate', account), 't', '0', 'ts', String(Date.now() + 5_000))
  t.false((await a.takeRequest(account, plan)).allowed)
})

test('however slow Redis is, a request that asked for tokens gets its own: one round trip, no retry loop', async (t) => {
  let clock = Date.now()
  const [a] = twoProcesses(() => (clock += 150)) // every reading of the clock is 150 ms later: each lease is over at once
  const account = randomUUID()
  const before = a.redisCalls
  const decisions = await Promise.all(Array.from({ length: 20 }, () => a.takeRequest(account, PLANS.business)))
  t.true(decisions.every((d) => d.allowed))
  t.true(a.redisCalls - before <= 20, `${a.redisCalls - before} round trips for 20 requests`)
})

test('many concurrent single points in one process lease at most 1% of what is left of the day', async (t) => {
  const [a, b] = twoProcesses()
  const account = randomUUID()
  const plan = PLANS.pro
  for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 100 }, () => a.reservePoints(account, plan, 1, true)))
  await sleep(2 * LEASE_MS + 100)
  const left = 3_000
  await redis.set(dayKey(account), String(plan.pointsPerDay - left))
  const granted = (await Promise.all(Array.from({ length: 300 }, () => a.reservePoints(account, plan, 1, true)))).reduce((s, n) => s + n, 0)
  t.is(granted, 300)
  const heldAhead = (await used(account)) - (plan.pointsPerDay - left) - granted
  t.true(heldAhead <= left / 100, `${heldAhead} points leased ahead with ${left} left`)
  // The other process can still take what is not leased.
  t.is(await b.reservePoints(account, plan, 50, true), 50)
})

test('Redis away: every request and point is refused with the error, leases or not, and nothing is left unhandled', async (t) => {
  const connection = createRedis({ redisUrl: `redis://127.0.0.1:${await closedPort()}` })
  const limits = new Limits(connection, config)
  t.teardown(async () => {
    await limits.close()
    connection.disconnect()
  })
  const account = randomUUID()
  for (let wave = 0; wave < 2; wave++) {
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 100 }, () => limits.takeRequest(account, PLANS.business)),
      ...Array.from({ length: 100 }, () => limits.reservePoints(account, PLANS.business, 1, true)),
    ])
    t.true(
      outcomes.every((o) => o.status === 'rejected'),
      `wave ${wave}`,
    )
    // Alone, right after a busy wave: a lease request with nobody waiting on it.
    await t.throwsAsync(limits.reservePoints(account, PLANS.business, 1, true))
    await t.throwsAsync(limits.takeRequest(account, PLANS.business))
  }
  await new Promise((r) => setTimeout(r, 50))
})

test('a leased point seen in memory can still be taken in the same turn when the lease ends in between', async (t) => {
  let clock = Date.now()
  const [a] = twoProcesses(() => clock)
  const account = randomUUID()
  const plan = PLANS.business
  // Concurrent single points make a busy account: the process leases points ahead.
  await Promise.all(Array.from({ length: 50 }, () => a.reservePoints(account, plan, 1, true)))
  await Promise.all(Array.from({ length: 50 }, () => a.reservePoints(account, plan, 1, true)))
  t.true(a.hasLeasedPoint(account), 'a lease is held')
  // The lease's last millisecond: seen then, the point must still be there a moment later.
  const leaseEnd = clock + LEASE_MS
  for (clock = leaseEnd - 30; clock < leaseEnd; clock++) {
    const seen = a.hasLeasedPoint(account)
    clock += 1 // the clock moves on between the look and the take, as it may within one turn
    if (seen) t.true(a.takeLeasedPoint(account), `seen at ${leaseEnd - clock + 1} ms before the end, then refused`)
    clock -= 1
  }
  clock = leaseEnd
  t.false(a.hasLeasedPoint(account))
  t.false(a.takeLeasedPoint(account))
})

test('a busy account finds a lease in memory at every write: the next lease is taken before this one runs out', async (t) => {
  // The process's clock moves 2 ms a write whatever the machine's load, so the demand it sees is steady.
  let clock = Date.now()
  const [a] = twoProcesses(() => clock)
  const account = randomUUID()
  const plan = PLANS.business
  // Two waves of concurrent writes make the account busy: the process leases request tokens and points.
  for (let wave = 0; wave < 2; wave++)
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        await a.takeRequest(account, plan)
        await a.reservePoints(account, plan, 1, true)
      }),
    )
  // Then writes decided in memory only (as the direct write route decides them), one every 2 ms for three lease
  // lives: without a renewal ahead each lease would run out and leave every later write to the slow path.
  const before = a.redisCalls
  let taken = 0
  let missed = 0
  for (let i = 0; i < (3 * LEASE_MS) / 2; i++) {
    clock += 2
    const request = a.takeLeasedRequest(account, plan)
    const point = request !== undefined && a.hasLeasedPoint(account) && a.takeLeasedPoint(account)
    if (point) taken++
    else missed++
    await sleep(1) // Redis answers the renewals meanwhile
  }
  // A loaded machine may hold a renewal's answer past the end of the lease it renews.
  t.true(missed <= taken / 50, `${missed} writes found no lease, ${taken} did`)
  t.true(a.redisCalls - before < taken / 20, `${a.redisCalls - before} Redis round trips for ${taken} writes`)
  // The renewals took points ahead; once the leases end, the day counter holds exactly the points taken.
  await a.giveBackLeases()
  t.is(await used(account), 100 + taken)
})

test('a request that finds the lease spent while its renewal is in flight takes from the renewal: no token left unspent while requests are refused', async (t) => {
  // A clock that stands still: the bucket gains nothing meanwhile, so every token is counted.
  const clock = Date.now()
  const [a] = twoProcesses(() => clock)
  const account = randomUUID()
  const plan = PLANS.free
  const bucket = redisKey(config, 'rate', account)
  // Concurrent requests make the account busy; the next one leases tokens ahead.
  await Promise.all(Array.from({ length: 30 }, () => a.takeRequest(account, plan)))
  t.true((await a.takeRequest(account, plan)).allowed)
  // Five tokens left in the shared bucket; the lease spent in memory, which sends its renewal to take them.
  await redis.hset(bucket, 't', '5', 'ts', String(clock))
  let leased = 0
  while (a.takeLeasedRequest(account, plan)) leased++
  t.true(leased >= 2, `${leased} taken from the lease`)
  // In the same turn, with the renewal still on its way: these must get the renewal's five, and no more.
  const decisions = await Promise.all(Array.from({ length: 10 }, () => a.takeRequest(account, plan)))
  t.is(decisions.filter((d) => d.allowed).length, 5)
  t.is(Number(await redis.hget(bucket, 't')), 0)
})

test('a point that finds the lease spent while its renewal is in flight is taken from the renewal, without a trip of its own', async (t) => {
  const clock = Date.now()
  const [a] = twoProcesses(() => clock)
  const account = randomUUID()
  const plan = PLANS.business
  // Concurrent single points make the account busy; the next one leases points ahead.
  await Promise.all(Array.from({ length: 30 }, () => a.reservePoints(account, plan, 1, true)))
  t.is(await a.reservePoints(account, plan, 1, true), 1)
  let leased = 0
  while (a.takeLeasedPoint(account)) leased++
  t.true(leased >= 2, `${leased} taken from the lease`)
  // The last takes sent the renewal; these five find the lease spent in its turn.
  const calls = a.redisCalls
  const granted = await Promise.all(Array.from({ length: 5 }, () => a.reservePoints(account, plan, 1, true)))
  t.deepEqual(granted, [1, 1, 1, 1, 1])
  t.is(a.redisCalls, calls, 'no trip to Redis beside the renewal')
  await a.giveBackLeases()
  t.is(await used(account), 31 + leased + 5)
})
