// Health reflects the workers' real progress. With no worker
// taking jobs, or a worker stuck on a job, health turns 503 naming the queue
// and why; it recovers once the jobs move. (HEALTH_QUEUE_STUCK_SECONDS is 2 here.)
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { deferred } from '../helpers/deferred.js'

const app = appSuite({ env: { HEALTH_QUEUE_STUCK_SECONDS: '2' } })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function healthUntil(status: number, ms: number) {
  const deadline = Date.now() + ms
  for (;;) {
    const res = await request(app.url, '/api/v1/health')
    if (res.status === status || Date.now() > deadline) return res
    await sleep(100)
  }
}

test.serial('no worker taking jobs: 503 naming the queue once a job has waited too long; 200 once a worker runs', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  t.is((await request(app.url, '/api/v1/health')).status, 200)
  t.is((await request(app.url, '/api/v1/stats/c/count', { json: { count: 1 }, bearer: key })).status, 200)
  const stuck = await healthUntil(503, 5000)
  t.is(stuck.status, 503)
  t.deepEqual(stuck.body.failing, ['queue'])
  t.regex(stuck.body.checks.queue.error, /workers are not keeping up: the oldest waiting job in ingest has waited \d+ s/)
  t.like(stuck.body.checks.queue.queues.ingest, { waiting: 1, active: 0 })

  await app.startWorkers()
  await settle(app)
  const ok = await healthUntil(200, 5000)
  t.is(ok.status, 200)
  t.like(ok.body.checks.queue.queues.ingest, { waiting: 0, active: 0, oldest_waiting_s: 0, longest_active_s: 0 })
})

test.serial('a worker stuck on a job (its statement blocked): 503 naming the running time; 200 once it finishes', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  t.is((await request(app.url, '/api/v1/stats/held/count', { json: { count: 1 }, bearer: key })).status, 200)
  await settle(app)
  // Hold the stat's row: the next job storing a point of it waits for the lock, active, for as long as this lasts.
  const released = deferred()
  const locked = deferred()
  const holder = app.sql.begin(async (tx) => {
    await tx`select id from stats where account_id = ${user.accountId} for update`
    locked.resolve()
    await released.promise
  })
  await locked.promise
  t.is((await request(app.url, '/api/v1/stats/held/count', { json: { count: 1 }, bearer: key })).status, 200)
  const stuck = await healthUntil(503, 6000)
  released.resolve()
  await holder
  t.is(stuck.status, 503)
  t.deepEqual(stuck.body.failing, ['queue'])
  t.regex(stuck.body.checks.queue.error, /a worker is stuck: a job in ingest has been running for \d+ s/)
  await settle(app)
  t.is((await healthUntil(200, 5000)).status, 200)
})
