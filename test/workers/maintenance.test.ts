import test from 'ava'
import { Queue } from 'bullmq'
import { QUEUES } from '../../shared/jobs.js'
import { createWorkerRedis } from '../../shared/redis.js'
import { purgeSessionsJob } from '../../workers/purge-sessions.js'
import { appSuite } from '../helpers/suite.js'
import { signUp } from '../helpers/factories.js'
import { createLogger } from '../../shared/log.js'

const app = appSuite()

// Serial: the other test starts real workers, whose scheduled purge would otherwise race the direct call here.
test.serial('purge-sessions deletes sessions expired or revoked over a day ago, and keeps live ones', async (t) => {
  const live = await signUp(app.url)
  const old = await signUp(app.url)
  await app.sql`update sessions set expires_at = now() - interval '2 days' where account_id = ${old.accountId}`
  const result = await purgeSessionsJob(
    { config: app.config, sql: app.sql, log: createLogger({ logLevel: 'silent' }), queues: app.api.deps.queues },
    {},
    new Date(),
  )
  t.true(result.deleted >= 1)
  const rows = await app.sql`select account_id from sessions where account_id in (${live.accountId}, ${old.accountId})`
  t.deepEqual(
    rows.map((r) => r.account_id),
    [live.accountId],
  )
})

test.serial('two worker processes register the hourly schedule once, and a queued job runs through a real worker', async (t) => {
  const w1 = await app.startWorkers()
  const w2 = await app.startWorkers()
  const redis = createWorkerRedis(app.config)
  const queue = new Queue(QUEUES.maintenance, { connection: redis, prefix: app.config.redisPrefix })
  t.teardown(async () => {
    await queue.close()
    redis.disconnect()
  })
  const schedulers = (await queue.getJobSchedulers()).sort((a, b) => a.key.localeCompare(b.key))
  t.deepEqual(
    schedulers.map((s) => [s.key, s.every]),
    [
      ['compact-points', app.config.compactionIntervalSeconds * 1000],
      ['enforce-retention', 3600_000],
      ['purge-sessions', 3600_000],
    ],
  )

  const doomed = await signUp(app.url)
  await app.sql`update sessions set revoked_at = now() - interval '2 days' where account_id = ${doomed.accountId}`
  const job = await app.api.deps.queues.enqueue('purge-sessions', {})
  let state = await job.getState()
  for (let i = 0; i < 100 && state !== 'completed' && state !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 50))
    state = await job.getState()
  }
  t.is(state, 'completed')
  const [row] = await app.sql`select count(*)::int as n from sessions where account_id = ${doomed.accountId}`
  t.is(row.n, 0)
  await w1.close()
  await w2.close()
})

test('the job registry refuses a payload that does not match its schema, and adds nothing', async (t) => {
  const queue = app.api.deps.queues.get('maintenance')
  await t.throwsAsync(app.api.deps.queues.enqueue('purge-sessions', 'not an object' as never))
  const queued = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed'])
  t.false(queued.some((j) => typeof j.data === 'string'))
})
