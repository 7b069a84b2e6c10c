// Health and the API reference.
import { z } from 'zod'
import { checkHealth } from '../../shared/health.js'
import { generateDocument } from '../openapi.js'
import { baseUrl } from '../context.js'
import { parkedSummary } from '../../shared/points/parked.js'
import type { Routes } from '../route.js'

const Check = z.object({ status: z.enum(['ok', 'error']), latency_ms: z.number(), error: z.string().optional() })
const Health = z
  .object({
    status: z.enum(['ok', 'error']), failing: z.array(z.string()), checks: z.object({ postgres: Check, redis: Check, queue: Check }),
    parked_points: z.object({ count: z.number().int(), last_parked_at: z.iso.datetime().nullable() }).nullable()
      .describe('Points PostgreSQL refused on their data, parked by the persist worker (npm run cli -- points:parked lists them); informational, never fails the check. Null when PostgreSQL is down.'),
  })
  .meta({ id: 'Health' })

export function healthRoutes(routes: Routes): void {
  routes
    .add({ method: 'get', path: '/api/v1/health', tag: 'health', summary: 'Health of the API and its dependencies',
      responses: { 200: { description: 'Every dependency answers', schema: Health }, 503: { description: 'A dependency is down; `failing` names it', schema: Health } } },
    async (ctx) => {
      const health = await checkHealth(ctx.deps)
      const parked = health.checks.postgres.status === 'ok' ? await parkedSummary(ctx.deps.sql).catch(() => null) : null
      ctx.status = health.status === 'ok' ? 200 : 503
      ctx.set('Cache-Control', 'no-store')
      ctx.body = { ...health, parked_points: parked }
    })
    .add({ method: 'get', path: '/api/v1/openapi.json', tag: 'reference', summary: 'This OpenAPI 3.1 document',
      responses: { 200: { description: 'The document' } } },
    (ctx) => {
      ctx.body = generateDocument(routes.registry, baseUrl(ctx))
    })
}
