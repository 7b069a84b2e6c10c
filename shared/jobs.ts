// The one registry of queues and jobs, shared by producers (api/) and
// consumers (workers/). Each job declares its queue, payload schema and
// retry policy together. Payloads carry ids, never secrets: they sit in Redis in clear.
import { z } from 'zod'
import type { JobsOptions } from 'bullmq'

/** Queue names carry a hash tag so that each queue's keys live in one Redis Cluster slot. */
export const QUEUES = {
  ingest: '{ingest}',
  rollups: '{rollups}',
  alerts: '{alerts}',
  deliver: '{deliver}',
  maintenance: '{maintenance}',
} as const
export type QueueKey = keyof typeof QUEUES

export interface JobSpec {
  queue: QueueKey
  schema: z.ZodType
  opts: JobsOptions
  /** Set for jobs that run on a schedule, once per cluster (a BullMQ job scheduler). */
  every?: (config: { alertEvalIntervalSeconds: number }) => number
}

export const PurgeSessions = z.object({})

/** One accepted point on its way to PostgreSQL: [stat id, unix seconds, value, ikey or null]. */
export type QueuedPoint = [statId: string, t: number, value: number, ikey: string | null]

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
function isQueuedPoint(p: unknown): p is QueuedPoint {
  return Array.isArray(p) && p.length === 4 && typeof p[0] === 'string' && UUID.test(p[0]) && Number.isSafeInteger(p[1]) &&
    typeof p[2] === 'number' && Number.isFinite(p[2]) && (p[3] === null || typeof p[3] === 'string')
}

// Checked by hand rather than as a zod tuple per point: a job holds hundreds of points and is checked
// on both sides of the queue, where a schema per element cost more than the rest of the hop.
const QueuedPoints = z.custom<QueuedPoint[]>(
  (v) => Array.isArray(v) && v.length > 0 && v.every(isQueuedPoint),
  'points must be a non-empty array of [stat id (uuid), unix seconds (integer), value (finite number), ikey (string or null)]',
)

export const PersistPoints = z.object({ batch_id: z.string().min(1), points: QueuedPoints })
export const RefreshRollups = z.object({})
export const EvaluateAlerts = z.object({})
export const DeliverAlert = z.object({ delivery_id: z.string().min(1) })

export const jobs = {
  'persist-points': {
    queue: 'ingest',
    schema: PersistPoints,
    // Workers never reject a point the API accepted: 20 attempts, 0.2 s doubling, span about a day.
    opts: { attempts: 20, backoff: { type: 'exponential', delay: 200 }, removeOnComplete: true, removeOnFail: false },
  },
  'refresh-rollups': {
    queue: 'rollups',
    schema: RefreshRollups,
    opts: { attempts: 1, removeOnComplete: true, removeOnFail: 50 },
    every: () => 2_000,
  },
  'evaluate-alerts': {
    queue: 'alerts',
    schema: EvaluateAlerts,
    opts: { attempts: 1, removeOnComplete: true, removeOnFail: 50 },
    every: (config) => config.alertEvalIntervalSeconds * 1000,
  },
  'deliver-alert': {
    queue: 'deliver',
    schema: DeliverAlert,
    // 12 attempts, 5 s doubling with jitter, capped at 1 h: about 3 hours in all (see workers/main.ts backoffStrategy).
    // Finished jobs are kept a week so that re-adding the same delivery id is a no-op.
    opts: { attempts: 12, backoff: { type: 'jitter', delay: 5_000 }, removeOnComplete: { age: 7 * 86_400 }, removeOnFail: { age: 7 * 86_400 } },
  },
  'purge-sessions': {
    queue: 'maintenance',
    schema: PurgeSessions,
    opts: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, removeOnComplete: 100, removeOnFail: 100 },
    every: () => 60 * 60 * 1000,
  },
} as const satisfies Record<string, JobSpec>

export type JobName = keyof typeof jobs
export type JobData<N extends JobName> = z.infer<(typeof jobs)[N]['schema']>

/** Parses a payload against its job's schema: producers before adding, workers again on receipt (a job may come from an older deploy). */
export function parseJob<N extends JobName>(name: N, data: unknown): JobData<N> {
  return jobs[name].schema.parse(data) as JobData<N>
}

export function isJobName(name: string): name is JobName {
  return Object.hasOwn(jobs, name)
}
