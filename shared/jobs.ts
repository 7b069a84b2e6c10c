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
  billing: '{billing}',
  imports: '{imports}',
  anomalies: '{anomalies}',
} as const
export type QueueKey = keyof typeof QUEUES

export interface JobSpec {
  queue: QueueKey
  schema: z.ZodType
  opts: JobsOptions
  /** Set for jobs that run on a schedule, once per cluster (a BullMQ job scheduler). */
  every?: (config: { alertEvalIntervalSeconds: number; anomalySweepIntervalSeconds: number; compactionIntervalSeconds: number }) => number
}

export const PurgeSessions = z.object({})
export const EnforceRetention = z.object({})
export const CompactPoints = z.object({})

/** One accepted point on its way to PostgreSQL: [stat id, unix seconds, value, ikey or null]. */
export type QueuedPoint = [statId: string, t: number, value: number, ikey: string | null]

/**
 * The points of a persist-points job as they sit in Redis: grouped by stat,
 * each stat id written once, `[stat id, [t, value], [t, value, ikey], ...]`,
 * in the order they were accepted. About a quarter of the bytes of one tuple
 * per point, which is what a backlog costs in Redis memory while workers catch up.
 */
export type PackedStat = [statId: string, ...points: PackedPoint[]]
type PackedPoint = [t: number, value: number] | [t: number, value: number, ikey: string]

export function packPoints(points: QueuedPoint[]): PackedStat[] {
  const byStat = new Map<string, PackedStat>()
  for (const [statId, t, value, ikey] of points) {
    let stat = byStat.get(statId)
    if (!stat) byStat.set(statId, (stat = [statId]))
    stat.push(ikey === null ? [t, value] : [t, value, ikey])
  }
  return [...byStat.values()]
}

export function unpackPoints(stats: PackedStat[]): QueuedPoint[] {
  const out: QueuedPoint[] = []
  for (const [statId, ...points] of stats) for (const [t, value, ikey] of points) out.push([statId, t, value, ikey ?? null])
  return out
}

const UUID = z.regexes.uuid()
function isQueuedPoint(p: unknown): p is QueuedPoint {
  return (
    Array.isArray(p) &&
    p.length === 4 &&
    typeof p[0] === 'string' &&
    UUID.test(p[0]) &&
    Number.isSafeInteger(p[1]) &&
    typeof p[2] === 'number' &&
    Number.isFinite(p[2]) &&
    (p[3] === null || typeof p[3] === 'string')
  )
}
function isPackedPoint(p: unknown): p is PackedPoint {
  return (
    Array.isArray(p) &&
    (p.length === 2 || (p.length === 3 && typeof p[2] === 'string')) &&
    Number.isSafeInteger(p[0]) &&
    typeof p[1] === 'number' &&
    Number.isFinite(p[1])
  )
}
function isPackedStat(s: unknown): s is PackedStat {
  if (!Array.isArray(s) || s.length < 2 || typeof s[0] !== 'string' || !UUID.test(s[0])) return false
  for (let i = 1; i < s.length; i++) if (!isPackedPoint(s[i])) return false
  return true
}

// Checked by hand rather than as zod tuples: a job holds hundreds of points and is checked on both
// sides of the queue, where a schema per element cost more than the rest of the hop.
const PackedStats = z.custom<PackedStat[]>(
  (v) => Array.isArray(v) && v.length > 0 && v.every(isPackedStat),
  'stats must be a non-empty array of [stat id (uuid), [unix seconds (integer), value (finite number), ikey (string, optional)], ...]',
)

// The form of deploys before points were packed: one tuple per point. Still read, so that jobs queued
// by an older API process during a rolling deploy are stored like any other.
const QueuedPoints = z.custom<QueuedPoint[]>(
  (v) => Array.isArray(v) && v.length > 0 && v.every(isQueuedPoint),
  'points must be a non-empty array of [stat id (uuid), unix seconds (integer), value (finite number), ikey (string or null)]',
)

export const PersistPoints = z.union([
  z.object({ batch_id: z.string().min(1), stats: PackedStats }),
  z.object({ batch_id: z.string().min(1), points: QueuedPoints }),
])

/** The points of a persist-points job, whichever form it was queued in. */
export function pointsOf(data: z.infer<typeof PersistPoints>): QueuedPoint[] {
  return 'stats' in data ? unpackPoints(data.stats) : data.points
}
export const RefreshRollups = z.object({})
export const EvaluateAlerts = z.object({})
export const DeliverAlert = z.object({ delivery_id: z.string().min(1) })
export const SyncBilling = z.object({ customer_id: z.string().min(1).max(255) })
export const ImportPoints = z.object({ import_id: z.uuid() })
export const AnomalySweep = z.object({})

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
    opts: {
      attempts: 12,
      backoff: { type: 'jitter', delay: 5_000 },
      removeOnComplete: { age: 7 * 86_400 },
      removeOnFail: { age: 7 * 86_400 },
    },
  },
  'purge-sessions': {
    queue: 'maintenance',
    schema: PurgeSessions,
    opts: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, removeOnComplete: 100, removeOnFail: 100 },
    every: () => 60 * 60 * 1000,
  },
  'enforce-retention': {
    queue: 'maintenance',
    schema: EnforceRetention,
    opts: { attempts: 3, backoff: { type: 'exponential', delay: 60_000 }, removeOnComplete: 100, removeOnFail: 100 },
    every: () => 60 * 60 * 1000,
  },
  'compact-points': {
    queue: 'maintenance',
    schema: CompactPoints,
    // Each day of a stat commits alone, so a failed or killed pass is simply taken up by the next one.
    opts: { attempts: 1, removeOnComplete: true, removeOnFail: 50 },
    every: (config) => config.compactionIntervalSeconds * 1000,
  },
  'sync-billing': {
    queue: 'billing',
    schema: SyncBilling,
    // Re-fetches the customer's subscription, so running it again is harmless: retried through a provider outage (about an hour).
    opts: { attempts: 12, backoff: { type: 'exponential', delay: 2_000 }, removeOnComplete: true, removeOnFail: { age: 7 * 86_400 } },
  },
  'import-points': {
    queue: 'imports',
    schema: ImportPoints,
    // Batches already stored are skipped on a retry, so retrying is safe; the last failure is recorded on the import.
    opts: { attempts: 5, backoff: { type: 'exponential', delay: 2_000 }, removeOnComplete: true, removeOnFail: { age: 7 * 86_400 } },
  },
  'anomaly-sweep': {
    queue: 'anomalies',
    schema: AnomalySweep,
    opts: { attempts: 1, removeOnComplete: true, removeOnFail: 50 },
    every: (config) => config.anomalySweepIntervalSeconds * 1000,
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
