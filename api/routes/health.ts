// Health and the API reference.
import { z } from 'zod'
import { checkHealth } from '../../shared/health.js'
import { docsPage, generateDocument } from '../openapi.js'
import type { Routes } from '../route.js'

const Check = z.object({ status: z.enum(['ok', 'error']), latency_ms: z.number(), error: z.string().optional() })
// Redis must not evict (maxmemory-policy noeviction) and should persist (AOF); the queue check is the workers' progress.
const RedisCheck = Check.extend({ maxmemory_policy: z.string().optional(), aof: z.enum(['on', 'off']).optional() })
const QueueProgress = z.object({ waiting: z.number(), active: z.number(), oldest_waiting_s: z.number(), longest_active_s: z.number() })
const QueueCheck = Check.extend({ queues: z.record(z.string(), QueueProgress).optional() })
const Health = z
  .object({ status: z.enum(['ok', 'error']), failing: z.array(z.string()), checks: z.object({ postgres: Check, redis: RedisCheck, queue: QueueCheck }) })
  .meta({ id: 'Health' })

export function healthRoutes(routes: Routes): void {
  routes
    .add({ method: 'get', path: '/api/v1/health', tag: 'health', summary: 'Health of the API and its dependencies',
      responses: { 200: { description: 'Every dependency answers', schema: Health }, 503: { description: 'A dependency is down; `failing` names it', schema: Health } } },
    async (ctx) => {
      const health = await checkHealth(ctx.deps)
      ctx.status = health.status === 'ok' ? 200 : 503
      ctx.set('Cache-Control', 'no-store')
      ctx.body = health
    })
    .add({ method: 'get', path: '/api/v1/openapi.json', tag: 'reference', summary: 'This OpenAPI 3.1 document',
      responses: { 200: { description: 'The document' } } },
    (ctx) => {
      ctx.body = generateDocument(routes.registry, ctx.deps.config.publicUrl)
    })
  routes.router.get('/docs', (ctx) => {
    ctx.type = 'html'
    ctx.body = docsPage('/api/v1/openapi.json')
  })
}
