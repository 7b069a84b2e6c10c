// A Redis that restarts empty (a managed Redis after a
// failover) loses the job schedulers; the running worker registers them again
// and alert evaluation resumes. Runs against a redis-server of its own.
import test from 'ava'
import { randomUUID } from 'node:crypto'
import { insertAlert } from '../../shared/alerts/repo.js'
import { CreateAlertBody } from '../../shared/alerts/schema.js'
import { applyBatch } from '../../shared/points/repo.js'
import { appSuite } from '../helpers/suite.js'
import { signUp } from '../helpers/factories.js'
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server.js'

let redis: OwnRedis
test.before(async () => {
  redis = await startOwnRedis() // no persistence: a restart comes back empty
})
const app = appSuite({ workers: true, env: () => ({ REDIS_URL: redis.url, ALERT_EVAL_INTERVAL_SECONDS: '1' }) })
test.serial.after.always(() => redis?.destroy())

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test('after Redis restarts empty under a running worker, the schedules come back and alerts are evaluated again', async (t) => {
  t.timeout(40_000)
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  const [stat] = await app.sql<
    { id: string }[]
  >`insert into stats (account_id, name, kind) values (${user.accountId}, 'cpu', 'gauge') returning id`
  const body = CreateAlertBody.parse({
    stat_name: 'cpu',
    condition_type: 'above',
    threshold: 90,
    channel: 'webhook',
    channel_config: { webhook_url: 'http://127.0.0.1:9/hook' },
  })
  const alert = (await insertAlert(app.sql, user.accountId, body, 'ok', 100))!
  const alerts = app.api.deps.queues.get('alerts')
  t.truthy(await alerts.getJobScheduler('evaluate-alerts'))

  await redis.kill()
  await sleep(500)
  await redis.start()
  const restartedAt = Date.now()

  // The restarted Redis holds nothing; the worker notices on reconnecting and registers the schedules again.
  let back = 0
  for (let i = 0; i < 100 && !back; i++) {
    if (await alerts.getJobScheduler('evaluate-alerts').catch(() => undefined)) back = Date.now() - restartedAt
    else await sleep(100)
  }
  t.true(back > 0, 'evaluate-alerts is scheduled again')
  t.truthy(await app.api.deps.queues.get('rollups').getJobScheduler('refresh-rollups'))
  t.truthy(await app.api.deps.queues.get('maintenance').getJobScheduler('purge-sessions'))
  t.log(`schedules back ${back} ms after Redis restarted`)

  // And evaluation runs: a point above the threshold fires the alert.
  const now = Math.floor(Date.now() / 1000)
  await applyBatch(app.sql, randomUUID(), [[stat.id, now - 5, 95, null]])
  let fired = 0
  for (let i = 0; i < 150 && !fired; i++) {
    const [row] = await app.sql<
      { n: number }[]
    >`select count(*)::int as n from alert_deliveries where alert_id = ${alert.id} and event = 'fired'`
    fired = row.n
    if (!fired) await sleep(100)
  }
  t.is(fired, 1, 'the alert fired after the restart')
  t.true(
    app.logs.some((l) => l.includes('job schedules were missing from Redis')),
    'the re-registration is logged',
  )
})
