import test from 'ava'
import { spawn, type ChildProcess } from 'node:child_process'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { serviceArgs } from '../helpers/processes.js'
import { settle, stored } from '../helpers/storage.js'

// No in-process workers here: the only consumers are the child processes below.
const app = appSuite()

// The jobs the killed worker held come back once its lock lapses: 5 s here instead of the default 15 s, still
// long enough that a live worker on a busy machine keeps renewing it (every 2.5 s).
function spawnWorker(): ChildProcess {
  return spawn(process.execPath, serviceArgs('workers/main.ts'), {
    env: {
      ...process.env,
      DATABASE_URL: app.config.databaseUrl,
      REDIS_URL: app.config.redisUrl,
      REDIS_PREFIX: app.config.redisPrefix,
      LOG_LEVEL: 'error',
      JOB_LOCK_SECONDS: '5',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}

test('a worker killed mid-batch and restarted: every accepted point is stored exactly once', async (t) => {
  t.timeout(90_000)
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  // Enough jobs that the worker (32 jobs in flight, committed 16 at a time) is still busy when it is killed.
  // Recent times: a worker starting runs the retention job, which would delete points older than the plan keeps.
  const t0 = Math.floor(Date.now() / 1000) - 3600
  const batches = Array.from({ length: 400 }, (_, b) => ({
    ezkey: key,
    data: Array.from({ length: 100 }, (_, i) => ({ stat: `k${i % 3}`, count: 1, t: t0 + b })),
  }))
  const res = await Promise.all(batches.map((json) => request(app.url, '/ez', { json })))
  t.true(res.every((r) => r.body.accepted === 100))

  const doomed = spawnWorker()
  let atKill = 0
  for (let i = 0; i < 3000 && atKill === 0; i++) {
    atKill = (await stored(app, user.accountId)).points
    if (!atKill) await new Promise((r) => setTimeout(r, 5))
  }
  doomed.kill('SIGKILL')
  await new Promise((r) => doomed.once('exit', r))
  atKill = (await stored(app, user.accountId)).points
  t.true(atKill > 0 && atKill < 40_000, `killed with ${atKill} of 40,000 points stored`)

  // The replacement picks up the waiting jobs and, after the lock expires, the ones the dead worker held.
  const replacement = spawnWorker()
  t.teardown(() => {
    replacement.kill('SIGTERM')
  })
  await settle(app, 60_000)
  const s = await stored(app, user.accountId)
  t.is(s.points, 40_000)
  // Every job was applied once: the batches recorded hold exactly the accepted points.
  const [{ n }] = await app.sql<{ n: number }[]>`select sum(points)::int as n from applied_batches`
  t.is(n, 40_000)
})
