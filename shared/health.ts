// Dependency checks behind GET /api/v1/health. Each check has its own
// deadline so that a hung dependency reports as down instead of hanging.
import type { Redis } from 'ioredis'
import type { Sql } from './db.js'
import type { Queues } from './queues.js'

export interface CheckResult {
  status: 'ok' | 'error'
  latency_ms: number
  error?: string
}

const DEADLINE_MS = 2000

async function timed(run: () => Promise<unknown>): Promise<CheckResult> {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([run(), new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS) })])
    return { status: 'ok', latency_ms: Math.round(performance.now() - started) }
  } catch (err) {
    return { status: 'error', latency_ms: Math.round(performance.now() - started), error: (err as Error).message || String(err) }
  } finally {
    clearTimeout(timer)
  }
}

/** Runs every check in parallel; healthy only when all pass. */
export async function checkHealth(deps: { sql: Sql; redis: Redis; queues: Queues }) {
  const [postgres, redis, queue] = await Promise.all([
    timed(() => deps.sql`select 1`),
    timed(() => deps.redis.ping()),
    // Reading the queue's counters exercises BullMQ's own keys and scripts, not just the socket.
    timed(() => deps.queues.get('maintenance').getJobCounts('waiting', 'active', 'failed')),
  ])
  const checks = { postgres, redis, queue }
  const failing = Object.entries(checks).filter(([, c]) => c.status !== 'ok').map(([name]) => name)
  return { status: failing.length ? ('error' as const) : ('ok' as const), failing, checks }
}
