// Dependency checks behind GET /api/v1/health. Each check has its own
// deadline so that a hung dependency reports as down instead of hanging.
// The queue check reports the workers' real progress, so that a worker that is
// stuck (or absent) turns health 503 even while every connection answers.
import type { Redis } from 'ioredis'
import type { Config } from './config.js'
import type { Sql } from './db.js'
import { QUEUES, type QueueKey } from './jobs.js'
import type { Queues } from './queues.js'
import { evicts, type RedisSettings } from './redis.js'

export interface CheckResult {
  status: 'ok' | 'error'
  latency_ms: number
  error?: string
  [detail: string]: unknown
}

const DEADLINE_MS = 2000
/** Runs a check; it may answer details, and `error` with them when the dependency answered with a problem (settings, progress). */
async function timed(run: () => Promise<Record<string, unknown> | undefined>): Promise<CheckResult> {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const latency = () => Math.round(performance.now() - started)
  try {
    const outcome = await Promise.race([
      run(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS)
      }),
    ])
    return { status: typeof outcome?.error === 'string' ? 'error' : 'ok', latency_ms: latency(), ...outcome }
  } catch (err) {
    return { status: 'error', latency_ms: latency(), error: (err as Error).message || String(err) }
  } finally {
    clearTimeout(timer)
  }
}

/** The oldest waiting job's age and the longest-running active job's time, per queue, in seconds. */
export async function queueProgress(
  queues: Queues,
): Promise<Record<QueueKey, { waiting: number; active: number; oldest_waiting_s: number; longest_active_s: number }>> {
  const now = Date.now()
  const entries = await Promise.all(
    (Object.keys(QUEUES) as QueueKey[]).map(async (key) => {
      const queue = queues.get(key)
      const client = (await queue.client) as unknown as Redis
      // Jobs enter `wait` on the left and leave on the right: the rightmost is the oldest.
      const [[, waiting], [, oldest], [, active]] = (await client
        .multi()
        .llen(queue.keys.wait)
        .lindex(queue.keys.wait, -1)
        .lrange(queue.keys.active, 0, 99)
        .exec())! as [[null, number], [null, string | null], [null, string[]]]
      const pipe = client.pipeline()
      if (oldest) pipe.hget(queue.toKey(oldest), 'timestamp')
      for (const id of active) pipe.hget(queue.toKey(id), 'processedOn')
      const times = ((await pipe.exec()) ?? []).map(([, v]) => Number(v ?? now))
      const oldestAt = oldest ? times.shift()! : now
      const age = (at: number) => Math.max(0, Math.round((now - at) / 1000))
      return [
        key,
        { waiting, active: active.length, oldest_waiting_s: age(oldestAt), longest_active_s: age(Math.min(now, ...times)) },
      ] as const
    }),
  )
  return Object.fromEntries(entries) as Awaited<ReturnType<typeof queueProgress>>
}

/** Runs every check in parallel; healthy only when all pass. */
export async function checkHealth(deps: {
  config: Pick<Config, 'healthQueueStuckSeconds'>
  sql: Sql
  redis: Redis
  queues: Queues
  redisSettings?: RedisSettings
}) {
  // A job ready to run, or running, for longer than this means the workers are stuck or gone.
  const stuck = deps.config.healthQueueStuckSeconds
  const [postgres, redis, queue] = await Promise.all([
    timed(() => deps.sql`select 1`.then(() => undefined)),
    timed(async () => {
      await deps.redis.ping()
      if (!deps.redisSettings) return
      const s = await deps.redisSettings.refresh()
      const details = { maxmemory_policy: s.maxmemoryPolicy, aof: s.aof }
      if (!evicts(s.maxmemoryPolicy)) return details
      return {
        error: `maxmemory-policy ${s.maxmemoryPolicy} may evict accepted points before they are stored: writes are refused until it is noeviction`,
        ...details,
      }
    }),
    // Reads BullMQ's own keys: the workers' progress, not just the socket.
    timed(async () => {
      const progress = await queueProgress(deps.queues)
      for (const [key, p] of Object.entries(progress)) {
        if (p.oldest_waiting_s > stuck)
          return {
            error: `workers are not keeping up: the oldest waiting job in ${key} has waited ${p.oldest_waiting_s} s`,
            queues: progress,
          }
        if (p.longest_active_s > stuck)
          return { error: `a worker is stuck: a job in ${key} has been running for ${p.longest_active_s} s`, queues: progress }
      }
      return { queues: progress }
    }),
  ])
  const checks = { postgres, redis, queue }
  const failing = Object.entries(checks)
    .filter(([, c]) => c.status !== 'ok')
    .map(([name]) => name)
  return { status: failing.length ? ('error' as const) : ('ok' as const), failing, checks }
}
