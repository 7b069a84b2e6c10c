// The scrape's gauges through a Redis or PostgreSQL outage (shared/metrics/cluster.ts): absent, with
// scrape_dependency_up 0, while the dependency does not answer (none left at 0, a value that would read as "no
// lag"), and back with what it holds once it answers (the gauges are set only when their value changed, so a
// series removed in the outage must be set again).
import test from 'ava'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { createSql } from '../../shared/db.js'
import { ClusterGauges } from '../../shared/metrics/cluster.js'
import { exposition } from '../../shared/metrics/exposition.js'
import { serviceMetrics } from '../../shared/metrics/registry.js'
import { QUEUES } from '../../shared/jobs.js'
import { createTestDatabase } from '../helpers/db.js'
import { startOwnPostgres } from '../helpers/own-postgres.js'
import { startOwnRedis } from '../helpers/redis-server.js'

// Serial: both read this process's one registry.
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}
/** Past the gauges' 2 s cache, so the next refresh reads again. */
const pastCache = () => new Promise((resolve) => setTimeout(resolve, 2100))

test.serial('queue gauges are absent while Redis is down and come back with what the queue holds', async (t) => {
  const redis = await startOwnRedis()
  const db = await createTestDatabase()
  const sql = createSql(db.url, { max: 2 })
  const gauges = new ClusterGauges(serviceMetrics())
  const remove = gauges.add({ sql, config: { redisUrl: redis.url, redisPrefix: 'mr' } })
  const admin = new Redis(redis.url)
  const queue = new Queue(QUEUES.ingest, { connection: admin, prefix: 'mr' })
  t.teardown(async () => {
    await remove()
    await queue.close()
    admin.disconnect()
    await sql.end()
    await db.drop()
    await redis.destroy()
  })
  const waiting = 'metrics_service_queue_jobs{queue="ingest",state="waiting"}'
  const up = 'metrics_service_scrape_dependency_up{dependency="redis"}'
  const read = async () => {
    await gauges.refresh()
    return exposition(serviceMetrics().registry)
  }

  await queue.add('persist', {})
  let text = await read()
  t.is(sample(text, waiting), 1)
  t.is(sample(text, up), 1)

  await redis.stop()
  await pastCache()
  text = await read()
  t.is(sample(text, up), 0)
  t.is(sample(text, waiting), undefined, 'no stale queue gauge while Redis does not answer')
  t.is(sample(text, 'metrics_service_persist_lag_seconds'), undefined)
  t.is(sample(text, 'metrics_service_scrape_dependency_up{dependency="postgres"}'), 1)

  // Back, holding nothing (no persistence): the same series, at the same value as before the outage, is set again.
  await redis.start()
  await queue.add('persist', {})
  await pastCache()
  text = await read()
  t.is(sample(text, up), 1)
  t.is(sample(text, waiting), 1)
  t.is(sample(text, 'metrics_service_queue_jobs{queue="alerts",state="waiting"}'), 0)
})

test.serial('database gauges are absent while PostgreSQL is down and come back with what it holds', async (t) => {
  const postgres = await startOwnPostgres()
  const sql = createSql(postgres.url, { max: 2 })
  const gauges = new ClusterGauges(serviceMetrics())
  const remove = gauges.add({ sql, config: { redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379', redisPrefix: 'mp' } })
  t.teardown(async () => {
    await remove()
    await sql.end()
    await postgres.destroy()
  })
  const up = 'metrics_service_scrape_dependency_up{dependency="postgres"}'
  const read = async () => {
    await gauges.refresh()
    return exposition(serviceMetrics().registry)
  }

  let text = await read()
  t.is(sample(text, up), 1)
  t.is(sample(text, 'metrics_service_rollup_lag_seconds'), 0)
  t.is(sample(text, 'metrics_service_compaction_backlog_blocks'), 0)

  await postgres.stop()
  await pastCache()
  text = await read()
  t.is(sample(text, up), 0)
  for (const gauge of ['rollup_lag_seconds', 'rollup_pending_rows', 'compaction_backlog_blocks', 'alert_evaluation_lag_seconds'])
    t.is(sample(text, `metrics_service_${gauge}`), undefined, `no ${gauge} while PostgreSQL does not answer`)
  t.is(sample(text, 'metrics_service_scrape_dependency_up{dependency="redis"}'), 1)

  await postgres.start()
  await pastCache()
  text = await read()
  t.is(sample(text, up), 1)
  t.is(sample(text, 'metrics_service_rollup_lag_seconds'), 0)
  t.is(sample(text, 'metrics_service_compaction_backlog_blocks'), 0)
})
