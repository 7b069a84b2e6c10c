// Health and the API reference.
import { z } from 'zod'
import { checkHealth } from '../../shared/health.js'
import { generateDocument } from '../openapi.js'
import { baseUrl } from '../context.js'
import { parkedSummary } from '../../shared/points/parked.js'
import type { Routes } from '../route.js'
import { statsdCountKey } from '../../shared/ingest/protocols/statsd-intake.js'
import type { Ctx } from '../context.js'

const Check = z.object({ status: z.enum(['ok', 'error']), latency_ms: z.number(), error: z.string().optional() })
// Redis must not evict (maxmemory-policy noeviction) and should persist (AOF); the queue check is the workers' progress.
const RedisCheck = Check.extend({ maxmemory_policy: z.string().optional(), aof: z.enum(['on', 'off']).optional() })
const QueueProgress = z.object({ waiting: z.number(), active: z.number(), oldest_waiting_s: z.number(), longest_active_s: z.number() })
const QueueCheck = Check.extend({ queues: z.record(z.string(), QueueProgress).optional() })
const Health = z
  .object({
    status: z.enum(['ok', 'error']),
    failing: z.array(z.string()),
    checks: z.object({ postgres: Check, redis: RedisCheck, queue: QueueCheck }),
    parked_points: z
      .object({ count: z.number().int(), last_parked_at: z.iso.datetime().nullable() })
      .nullable()
      .describe(
        'Points PostgreSQL refused on their data, parked by the persist worker (npm run cli -- points:parked lists them); informational, never fails the check. Null when PostgreSQL is down.',
      ),
    read_replica: z
      .object({
        state: z.enum(['none', 'in_use', 'lagging', 'unreachable', 'not_a_standby']),
        lag_s: z.number().optional(),
        reason: z.string().optional(),
      })
      .describe(
        'The PostgreSQL read replica (DATABASE_READ_URL): `none` when unset; a replica lagging more than READ_REPLICA_MAX_LAG_SECONDS or unreachable is bypassed (reads go to the primary) and never fails the check.',
      ),
    statsd: z
      .object({ listening: z.boolean(), accepted_today: z.number().int(), refused_today: z.number().int() })
      .nullable()
      .describe(
        'StatsD packets (UDP datagrams, TCP lines) accepted and refused today by every API process; refusals have no answer, so they are counted here. Informational, never fails the check. Null when Redis is down.',
      ),
  })
  .meta({ id: 'Health' })

async function statsdToday(ctx: Ctx) {
  const { redis, config } = ctx.deps
  const [accepted, refused] = await redis.mget(statsdCountKey(config, 'accepted', null), statsdCountKey(config, 'refused', null))
  return { listening: config.statsdPort !== undefined, accepted_today: Number(accepted ?? 0), refused_today: Number(refused ?? 0) }
}

export function healthRoutes(routes: Routes): void {
  routes
    .add(
      {
        method: 'get',
        path: '/api/v1/health',
        tag: 'health',
        summary: 'Health of the API and its dependencies',
        responses: {
          200: { description: 'Every dependency answers', schema: Health },
          503: { description: 'A dependency is down; `failing` names it', schema: Health },
        },
      },
      async (ctx) => {
        const health = await checkHealth(ctx.deps)
        const parked = health.checks.postgres.status === 'ok' ? await parkedSummary(ctx.deps.sql).catch(() => null) : null
        ctx.status = health.status === 'ok' ? 200 : 503
        const statsd = health.checks.redis.status === 'ok' ? await statsdToday(ctx).catch(() => null) : null
        ctx.body = { ...health, parked_points: parked, read_replica: ctx.deps.reads.health(), statsd }
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/openapi.json',
        tag: 'reference',
        summary: 'This OpenAPI 3.1 document',
        responses: { 200: { description: 'The document' } },
      },
      (ctx) => {
        ctx.body = generateDocument(routes.registry, baseUrl(ctx))
      },
    )
}
