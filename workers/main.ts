// The worker process: one BullMQ Worker per queue in the registry, the
// schedules registered once per cluster, graceful shutdown on SIGTERM.
import { Worker, type Job, type MinimalJob } from 'bullmq'
import { pathToFileURL } from 'node:url'
import type { Redis } from 'ioredis'
import { loadConfigOrExit, type Config } from '../shared/config.js'
import { createSql } from '../shared/db.js'
import { parseJob, QUEUES, isJobName, type JobData, type JobName, type QueueKey } from '../shared/jobs.js'
import { createLogger, type Logger } from '../shared/log.js'
import { Outages } from '../shared/outages.js'
import { Queues } from '../shared/queues.js'
import { createRedis, createWorkerRedis } from '../shared/redis.js'
import { onShutdown } from '../shared/shutdown.js'
import { surviveClosedSocketWrites } from '../shared/driver-guard.js'
import { serveMetrics, type MetricsListener } from '../shared/metrics/listener.js'
import { observeWorker } from '../shared/metrics/instrument.js'
import type { Attempt, WorkerDeps } from './deps.js'
import { anomalySweepJob } from './anomaly-sweep.js'
import { deliverAlertJob } from './deliver-alert.js'
import { evaluateAlertsJob } from './evaluate-alerts.js'
import { importPointsJob } from './import-points.js'
import { persistPointsJob } from './persist-points.js'
import { purgeSessionsJob } from './purge-sessions.js'
import { compactPointsJob } from './compact-points.js'
import { enforceRetentionJob } from './enforce-retention.js'
import { refreshRollupsJob } from './refresh-rollups.js'
import { syncBillingJob } from './sync-billing.js'
import { dayCache } from '../shared/stats/day-cache.js'

// BullMQ's answer when a job is no longer where this worker left it: the reply to its completion was lost when Redis
// went away, and the command, resent on reconnect, found the job already finished; or its lock expired and another
// worker took it over (stalled-job recovery). The job ran, or runs elsewhere, and a second run finds the first one's
// work done (a batch's record, a delivery's status): a warning, not an error.
const JOB_MOVED = /^(Missing (key|lock) for job |Lock mismatch for job |Job \S+ is not in the \w+ state)/

type Handler<N extends JobName> = (deps: WorkerDeps, data: JobData<N>, now: Date, attempt: Attempt) => Promise<unknown>

/** Every job of the registry has exactly one handler; the compiler checks it. */
const handlers: { [N in JobName]: Handler<N> } = {
  'persist-points': persistPointsJob,
  'refresh-rollups': refreshRollupsJob,
  'evaluate-alerts': evaluateAlertsJob,
  'deliver-alert': deliverAlertJob,
  'purge-sessions': purgeSessionsJob,
  'enforce-retention': enforceRetentionJob,
  'compact-points': compactPointsJob,
  'sync-billing': syncBillingJob,
  'import-points': importPointsJob,
  'anomaly-sweep': anomalySweepJob,
}

// Persist jobs running at once are committed together (workers/persist-points.ts); rollups run one at a time.
const CONCURRENCY: Record<QueueKey, number> = {
  ingest: 32,
  rollups: 1,
  alerts: 1,
  deliver: 8,
  maintenance: 1,
  billing: 4,
  imports: 2,
  anomalies: 1,
}

/** Delivery retries: exponential from the job's delay, capped at an hour, with jitter so a receiver coming back is not hit by every retry at once. */
function backoffStrategy(attemptsMade: number, _type?: string, _err?: Error, job?: MinimalJob): number {
  const base = (job?.opts.backoff as { delay?: number } | undefined)?.delay ?? 5_000
  return Math.round(Math.min(3_600_000, base * 2 ** Math.max(0, attemptsMade - 1)) * (0.5 + Math.random() * 0.5))
}

/** How often the worker checks that Redis still holds the job schedules (besides on every reconnect). */
const SCHEDULE_CHECK_MS = 30_000

export interface RunningWorkers {
  /** The /metrics listener, when METRICS_PORT is set. */
  metrics: MetricsListener | undefined
  close(): Promise<void>
}

/** Starts processing every queue and registers the schedules (idempotent across processes). */
export async function startWorkers(config: Config, log: Logger): Promise<RunningWorkers> {
  // Rollup refreshes and alert evaluation over long ranges may take longer than a request should.
  const sql = createSql(config.databaseUrl, { applicationName: 'metrics-worker', statementTimeoutSeconds: 120 })
  dayCache.resize(config.rollupCacheBytes)
  const producerRedis = createRedis(config)
  // While Redis or PostgreSQL is down, each of the workers' connections fails many times a second: one line per outage.
  // Persist jobs that failed meanwhile wait out an exponential backoff (up to minutes after a long outage): once the
  // dependency is back they run at once.
  const outages = new Outages(
    log,
    { postgres: () => sql`select 1`, redis: () => producerRedis.ping() },
    () =>
      void queues
        .get('ingest')
        .promoteJobs()
        .catch(() => {}),
  )
  const queues = new Queues(config, producerRedis, (err) => outages.report(err) ?? log.error('queue error', { error: err.message }))
  const deps: WorkerDeps = { config, sql, log, queues }
  const metrics = config.metricsPort === undefined ? undefined : await serveMetrics(config, log, deps)

  // Schedules live in Redis: one that restarted empty (a managed Redis after a failover) has none, and nothing would
  // refresh rollups, evaluate alerts or purge sessions. So they are checked on every (re)connect and periodically.
  const ensureSchedules = async (update = false) => {
    const registered = await queues.ensureSchedules(config, { update })
    if (registered.length && !update)
      log.warn('job schedules were missing from Redis (restarted empty?): registered again', { schedules: registered })
  }
  await ensureSchedules(true).catch((err: Error) =>
    log.warn('could not register the job schedules yet; retrying once Redis answers', { error: err.message }),
  )
  const onReady = () => void ensureSchedules().catch(() => {})
  producerRedis.on('ready', onReady)
  const scheduleCheck = setInterval(onReady, SCHEDULE_CHECK_MS)
  scheduleCheck.unref()

  const connections: Redis[] = []
  const workers = (Object.keys(QUEUES) as QueueKey[]).map((key) => {
    const connection = createWorkerRedis(config)
    connections.push(connection)
    const worker = new Worker(
      QUEUES[key],
      async (job: Job) => {
        if (!isJobName(job.name)) throw new Error(`no handler for job ${job.name}`)
        const data = parseJob(job.name, job.data)
        const attempt = { number: job.attemptsMade + 1, final: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) }
        return (handlers[job.name] as Handler<JobName>)(deps, data, new Date(), attempt)
      },
      // A worker that dies mid-job loses its lock after lockDuration; another worker then
      // re-runs the job (stalled-job recovery), which applyBatch makes harmless.
      {
        connection,
        prefix: config.redisPrefix,
        concurrency: CONCURRENCY[key],
        lockDuration: config.jobLockSeconds * 1000,
        stalledInterval: Math.round((config.jobLockSeconds * 1000) / 3),
        settings: { backoffStrategy },
      },
    )
    // A job failing because a dependency is down is retried (or, if scheduled, runs again): the outage is the news,
    // not each job. A last attempt is still logged.
    const again = (job: Job | undefined) => !!job && (job.attemptsMade < (job.opts.attempts ?? 1) || !!job.repeatJobKey)
    worker.on(
      'failed',
      (job, err) =>
        (again(job) && outages.report(err)) ||
        log.warn('job failed', { queue: key, job: job?.name, job_id: job?.id, attempts: job?.attemptsMade, error: err.message }),
    )
    worker.on(
      'error',
      (err) =>
        outages.report(err) ??
        (JOB_MOVED.test(err.message)
          ? log.warn('job moved under the worker', { queue: key, error: err.message })
          : log.error('worker error', { queue: key, error: err.message })),
    )
    if (metrics) observeWorker(key, worker, metrics.metrics)
    return worker
  })

  return {
    metrics,
    async close() {
      clearInterval(scheduleCheck)
      outages.close()
      producerRedis.off('ready', onReady)
      // Worker.close() waits for the jobs in progress to finish.
      await Promise.all(workers.map((w) => w.close()))
      await metrics?.close()
      await queues.close()
      // BullMQ does not close connections it was handed.
      for (const c of connections) c.disconnect()
      producerRedis.disconnect()
      await sql.end({ timeout: 2 })
    },
  }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit()
  const log = createLogger(config).child({ component: 'worker' })
  surviveClosedSocketWrites(log)
  const running = await startWorkers(config, log)
  log.info('workers started', { queues: Object.values(QUEUES) })
  onShutdown(log, config.shutdownTimeoutMs, () => running.close())
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main()
