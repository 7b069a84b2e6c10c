// The service's own metrics (decisions.md 26), in one prom-client registry per process: a process running both
// the API and the workers (`npm run dev`) serves them on one listener. Names follow Prometheus' conventions:
// the `metrics_service_` prefix, base units (seconds, bytes), `_total` on counters. Process memory, CPU,
// event-loop lag and GC are under prom-client's default names (`process_*`, `nodejs_*`; process.ts).
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { registerProcessMetrics } from './process.js'

export const PREFIX = 'metrics_service_'

/** Where points come in: the label `route` of the points counters (a fixed set, whatever the request). */
export type PointRoute = 'single' | 'batch' | 'ez' | 'protocol' | 'statsd'

function build() {
  const registry = new Registry()
  const r = [registry]
  registerProcessMetrics(registry)
  return {
    registry,
    pointsAccepted: new Counter({
      name: `${PREFIX}points_accepted_total`,
      help: 'Points accepted (queued durably for storage), by write route.',
      labelNames: ['route'] as const,
      registers: r,
    }),
    pointsRefused: new Counter({
      name: `${PREFIX}points_refused_total`,
      help: 'Points refused (an error answer, nothing stored), by write route.',
      labelNames: ['route'] as const,
      registers: r,
    }),
    pointsDuplicate: new Counter({
      name: `${PREFIX}points_duplicate_total`,
      help: 'Points answered as a deduplicated retry (same ikey), by write route.',
      labelNames: ['route'] as const,
      registers: r,
    }),
    pointsStored: new Counter({
      name: `${PREFIX}points_stored_total`,
      help: 'Points written to PostgreSQL by persist jobs (a re-run of an already stored batch counts again).',
      registers: r,
    }),
    httpRequests: new Counter({
      name: `${PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by route pattern and status code.',
      labelNames: ['route', 'method', 'code'] as const,
      registers: r,
    }),
    httpDuration: new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Time from request to response, by route pattern.',
      labelNames: ['route'] as const,
      registers: r,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    jobsCompleted: new Counter({
      name: `${PREFIX}jobs_completed_total`,
      help: 'Jobs this worker finished, by queue.',
      labelNames: ['queue'] as const,
      registers: r,
    }),
    jobsFailed: new Counter({
      name: `${PREFIX}jobs_failed_total`,
      help: 'Job attempts that failed in this worker (retried unless final), by queue.',
      labelNames: ['queue'] as const,
      registers: r,
    }),
    jobDuration: new Histogram({
      name: `${PREFIX}job_duration_seconds`,
      help: 'Time a job ran in this worker, by queue.',
      labelNames: ['queue'] as const,
      registers: r,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    }),
    deliveries: new Counter({
      name: `${PREFIX}alert_delivery_attempts_total`,
      help: 'Alert delivery attempts, by outcome (delivered, failed, dropped).',
      labelNames: ['outcome'] as const,
      registers: r,
    }),
    // Read on each scrape from the queue and the database (cluster-wide: every process reports the same values;
    // aggregate them with max(), not sum()).
    queueJobs: new Gauge({
      name: `${PREFIX}queue_jobs`,
      help: 'Jobs in each queue, by state (waiting, active, delayed, failed).',
      labelNames: ['queue', 'state'] as const,
      registers: r,
    }),
    queueOldest: new Gauge({
      name: `${PREFIX}queue_oldest_job_age_seconds`,
      help: 'Age of the oldest job waiting to run, by queue (0 when none waits).',
      labelNames: ['queue'] as const,
      registers: r,
    }),
    queueLongestActive: new Gauge({
      name: `${PREFIX}queue_longest_active_job_seconds`,
      help: 'How long the longest-running active job has run, by queue.',
      labelNames: ['queue'] as const,
      registers: r,
    }),
    persistLag: new Gauge({
      name: `${PREFIX}persist_lag_seconds`,
      help: 'Age of the oldest accepted batch not yet stored (waiting, running or waiting out a retry).',
      registers: r,
    }),
    rollupPending: new Gauge({
      name: `${PREFIX}rollup_pending_rows`,
      help: 'Per-minute aggregates of stored points not yet folded into the rollups.',
      registers: r,
    }),
    rollupLag: new Gauge({
      name: `${PREFIX}rollup_lag_seconds`,
      help: 'Time since the least recently refreshed stat that has points waiting for its rollups was refreshed.',
      registers: r,
    }),
    compactionBacklog: new Gauge({
      name: `${PREFIX}compaction_backlog_blocks`,
      help: 'Write blocks waiting to be merged into their day block by the compaction.',
      registers: r,
    }),
    alertLag: new Gauge({
      name: `${PREFIX}alert_evaluation_lag_seconds`,
      help: 'Time since the least recently evaluated alert was evaluated (or created, if never).',
      registers: r,
    }),
    deliveriesQueued: new Gauge({
      name: `${PREFIX}alert_deliveries_queued`,
      help: 'Alert deliveries not yet delivered or given up.',
      registers: r,
    }),
    dbProbe: new Gauge({
      name: `${PREFIX}db_pool_acquire_probe_seconds`,
      help: "Time the scrape's statement (a few index scans) took through this process's pool: a pool starved of connections shows as waiting here.",
      labelNames: ['pool'] as const,
      registers: r,
    }),
    dbPoolMax: new Gauge({
      name: `${PREFIX}db_pool_max_connections`,
      help: "Connections this process's pool may open.",
      labelNames: ['pool'] as const,
      registers: r,
    }),
    scrapes: new Counter({ name: `${PREFIX}scrapes_total`, help: 'Scrapes of /metrics this process answered.', registers: r }),
    scrapeCpu: new Counter({
      name: `${PREFIX}scrape_cpu_seconds_total`,
      help: 'CPU this process spent from the arrival of a /metrics scrape to its answer (work of other requests meanwhile included).',
      registers: r,
    }),
    clusterUp: new Gauge({
      name: `${PREFIX}scrape_dependency_up`,
      help: 'Whether the scrape could read a dependency (1) or not (0): redis, postgres.',
      labelNames: ['dependency'] as const,
      registers: r,
    }),
  }
}

export type ServiceMetrics = ReturnType<typeof build>
let metrics: ServiceMetrics | undefined

/** This process's metrics (created once: prom-client refuses a name registered twice in one registry). */
export function serviceMetrics(): ServiceMetrics {
  return (metrics ??= build())
}
