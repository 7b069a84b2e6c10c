// Redis failing between checking an ikey and queueing its
// point must leave nothing claimed, so that the client's retry is stored.
// Runs against a redis-server of its own (stopped and restarted here).
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server.js'
import { settle } from '../helpers/storage.js'

let redis: OwnRedis
test.before(async () => {
  // With AOF: whatever reached Redis before it stopped is still there after the restart, as on a managed Redis.
  redis = await startOwnRedis({ aof: true })
})
const app = appSuite({ workers: true, env: () => ({ REDIS_URL: redis.url }) })
test.serial.after.always(() => redis?.destroy())

const nowS = () => Math.floor(Date.now() / 1000)

/** The next batcher.add first stops Redis: the write got past its ikey check, and queueing then fails. */
function stopRedisBeforeNextQueueing() {
  const batcher = app.api.deps.batcher
  const add = batcher.add.bind(batcher)
  batcher.add = async (points) => {
    batcher.add = add
    await redis.stop()
    return add(points)
  }
}

async function restartRedis() {
  await redis.start()
  for (let i = 0; i < 200; i++) {
    if ((await request(app.url, '/api/v1/health')).status === 200) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('the API did not see Redis come back within 10 s')
}

async function values(accountId: string, stat: string): Promise<number[]> {
  await settle(app, 20_000)
  const rows = await app.sql<{ value: number }[]>`
    select p.value from points p join stats s on s.id = p.stat_id where s.account_id = ${accountId} and s.name = ${stat} order by p.value`
  return rows.map((r) => r.value)
}

test.serial('a single write whose queueing failed is stored on retry, then deduplicated', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const tt = nowS() - 60
  // The stat exists, so the ikey is checked before any allowance is taken (the early path).
  t.is((await request(app.url, '/api/v1/stats/orders/count', { json: { count: 1, t: tt - 1 }, bearer: key })).status, 200)

  stopRedisBeforeNextQueueing()
  const failed = await request(app.url, '/api/v1/stats/orders/count', { json: { count: 5, t: tt, ikey: 'order-5' }, bearer: key })
  t.is(failed.status, 503)
  t.is(failed.body.code, 'unavailable')
  await restartRedis()

  const retry = await request(app.url, '/api/v1/stats/orders/count', { json: { count: 5, t: tt, ikey: 'order-5' }, bearer: key })
  // Not duplicate_ignored, and no replay disclosure either: nothing was ever stored at that second.
  t.deepEqual([retry.status, retry.body], [200, { status: 'ok' }])
  const again = await request(app.url, '/api/v1/stats/orders/count', { json: { count: 5, t: tt, ikey: 'order-5' }, bearer: key })
  t.deepEqual([again.status, again.body], [200, { status: 'ok', replay: 'duplicate_ignored' }])
  t.deepEqual(await values(user.accountId, 'orders'), [1, 5])
})

test.serial('a batch whose queueing failed (new stat, several ikeys) is stored on resend, once', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const tt = nowS() - 60
  const points = [1, 2, 3].map((n) => ({ stat: 'batch', count: n, t: tt, ikey: `k${n}` }))

  stopRedisBeforeNextQueueing()
  const failed = await request(app.url, '/api/v1/points', { json: { points }, bearer: key })
  t.is(failed.status, 503)
  await restartRedis()

  const resend = await request(app.url, '/api/v1/points', { json: { points }, bearer: key })
  t.deepEqual([resend.status, resend.body], [200, { status: 'ok', accepted: 3, duplicates: 0 }])
  const again = await request(app.url, '/api/v1/points', { json: { points }, bearer: key })
  t.deepEqual([again.status, again.body], [200, { status: 'ok', accepted: 3, duplicates: 3 }])
  t.deepEqual(await values(user.accountId, 'batch'), [1, 2, 3])
})

test.serial('the legacy /c route: a failed write is an error envelope, the resend is stored', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const tt = nowS() - 60
  t.is((await request(app.url, '/api/v1/stats/legacy/count', { json: { count: 1, t: tt - 1 }, bearer: key })).status, 200)

  stopRedisBeforeNextQueueing()
  const form = `ukey=${key}&key=legacy&count=4&t=${tt}&ikey=l-4`
  const failed = await request(app.url, '/c', { form })
  t.deepEqual([failed.status, failed.body.status], [200, 'error'])
  t.regex(failed.body.msg, /could not queue the points/)
  await restartRedis()

  const retry = await request(app.url, '/c', { form })
  t.deepEqual([retry.status, retry.body], [200, { status: 200, msg: 'ok' }])
  t.deepEqual(await values(user.accountId, 'legacy'), [1, 4])
})

/**
 * The next job add reaches Redis and then fails, as when the connection drops after the command went out and only
 * the reply is lost. `delay`: the job is queued delayed, so the failure is settled before a worker runs it (a
 * worker promotes delayed persist jobs when an outage ends, so it may run before the delay is out);
 * `afterStored`: the failure comes once a worker has stored the job. Returns the job's id once it is added.
 */
function loseNextReply(opts: { delay?: number; afterStored?: boolean }): { jobId?: string } {
  const lost: { jobId?: string } = {}
  const queues = app.api.deps.queues as unknown as { enqueue: (name: string, data: unknown, o?: { jobId?: string }) => Promise<unknown> }
  const enqueue = queues.enqueue
  queues.enqueue = async (name, data, o = {}) => {
    queues.enqueue = enqueue
    lost.jobId = o.jobId
    await enqueue.call(queues, name, data, { ...o, delay: opts.delay })
    for (let i = 0; opts.afterStored; i++) {
      if ((await app.sql`select 1 from applied_batches where id = ${o.jobId!} and points > 0`).length) break
      if (i > 400) throw new Error('no worker stored the job within 20 s')
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error('Connection is closed.')
  }
  return lost
}

test.serial(
  'a write without an ikey whose job reached Redis though its add failed is refused and never stored; the resend is stored once',
  async (t) => {
    const user = await signUp(app.url)
    const { key } = await createKey(app.url, user)
    t.is((await request(app.url, '/api/v1/stats/plain/value', { json: { value: 1 }, bearer: key })).status, 200)

    const lost = loseNextReply({ delay: 1500 })
    const failed = await request(app.url, '/api/v1/stats/plain/value', { json: { value: 7 }, bearer: key })
    t.deepEqual([failed.status, failed.body.code], [503, 'unavailable'])
    // The job is in Redis, waiting; once a worker has run it (and removed it, as every completed persist job is),
    // its batch was found settled and nothing of it stored.
    const queue = app.api.deps.queues.get('ingest')
    t.is(await queue.getJobState(lost.jobId!), 'delayed')
    for (let i = 0; (await queue.getJob(lost.jobId!)) && i < 200; i++) await new Promise((r) => setTimeout(r, 50))
    t.is(await queue.getJob(lost.jobId!), undefined)
    t.deepEqual(await values(user.accountId, 'plain'), [1])

    const resend = await request(app.url, '/api/v1/stats/plain/value', { json: { value: 7 }, bearer: key })
    t.is(resend.status, 200)
    t.deepEqual(await values(user.accountId, 'plain'), [1, 7])
  },
)

test.serial('a write whose add failed after a worker had stored its job is accepted, and stored once', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  t.is((await request(app.url, '/api/v1/stats/plain/value', { json: { value: 1 }, bearer: key })).status, 200)

  loseNextReply({ afterStored: true })
  const answered = await request(app.url, '/api/v1/stats/plain/value', { json: { value: 8 }, bearer: key })
  t.deepEqual([answered.status, answered.body], [200, { status: 'ok' }])
  t.deepEqual(await values(user.accountId, 'plain'), [1, 8])
})

test.serial('logs: each Redis outage is one warning and one recovery line per process, with no stacks', async (t) => {
  const parse = () => app.logs.map((l) => JSON.parse(l) as { level: string; message: string })
  // Recovery is noticed by a probe once a second: the last outage's line may still be on its way.
  for (let i = 0; i < 50 && parse().filter((l) => l.message === 'Redis available again').length < 3; i++)
    await new Promise((r) => setTimeout(r, 100))
  const lines = parse()
  // Three outages above, seen by the API and by the worker: at most two warnings each. An outage that starts
  // before the probe (once a second) noticed the last one's end is the same outage to a process, so under load
  // there can be fewer; what must never happen is a line per failed call.
  const down = lines.filter((l) => l.message === 'Redis unavailable').length
  const up = lines.filter((l) => l.message === 'Redis available again').length
  t.true(down >= 1 && down <= 6, `${down} warnings`)
  t.true(up >= 1 && up <= down, `${up} recoveries for ${down} warnings`)
  const errors = lines.filter((l) => ['unhandled error', 'worker error', 'queue error'].includes(l.message))
  t.deepEqual(errors, [])
})
