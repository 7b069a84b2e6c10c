// Where the counters are counted: a Koa middleware ahead of every other (requests by route pattern, and the
// write route each point came in by), a counting view of Ingest, and a BullMQ worker's events. Nothing here
// runs unless METRICS_PORT is set: without it the processes are exactly as they were.
import type { Job, Worker } from 'bullmq'
import type { Ingest } from '../ingest/ingest.js'
import type { QueueKey } from '../jobs.js'
import type { PointRoute, ServiceMetrics } from './registry.js'

/** Ingest with writeOne and writeMany counted: a single write is `single`, a batch is counted under `manyRoute`. */
export function countingIngest(ingest: Ingest, m: ServiceMetrics, manyRoute: PointRoute): Ingest {
  const view = Object.create(ingest) as Ingest
  view.writeOne = async (account, point, now) => {
    try {
      const out = await ingest.writeOne(account, point, now)
      if (out.replay === 'duplicate_ignored') m.pointsDuplicate.inc({ route: 'single' })
      else m.pointsAccepted.inc({ route: 'single' })
      return out
    } catch (err) {
      m.pointsRefused.inc({ route: 'single' })
      throw err
    }
  }
  view.writeMany = async (account, points, mode, now, label) => {
    try {
      const out = await ingest.writeMany(account, points, mode, now, label)
      // `accepted` counts the deduplicated ones too: they were answered as accepted, and not queued again.
      if (out.accepted > out.duplicates) m.pointsAccepted.inc({ route: manyRoute }, out.accepted - out.duplicates)
      if (out.duplicates) m.pointsDuplicate.inc({ route: manyRoute }, out.duplicates)
      if (points.length > out.accepted) m.pointsRefused.inc({ route: manyRoute }, points.length - out.accepted)
      return out
    } catch (err) {
      if (points.length) m.pointsRefused.inc({ route: manyRoute }, points.length)
      throw err
    }
  }
  return view
}

/** The write route of a batch request, by its path (single writes are told apart by Ingest.writeOne). */
export function batchRouteOf(path: string): PointRoute {
  if (path === '/ez' || path === '/api/ez') return 'ez'
  if (path === '/api/v1/points') return 'batch'
  return 'protocol'
}

/** Routes served ahead of the router (route.ts addDirect): the router does not name them on the context. */
const DIRECT = new Set(['/ez', '/c', '/v', '/api/ez', '/api/c', '/api/v', '/api/v2/write', '/write', '/api/v1/prom/write'])

interface Ctx<D> {
  method: string
  path: string
  status: number
  deps: D
  _matchedRoute?: string | RegExp
}

/**
 * The middleware to put first: counts each request under its route pattern (never its path: a pattern's
 * values stay a fixed set), and hands a POST the dependencies whose Ingest counts points under its route.
 */
export function requestMetrics<D extends { ingest: Ingest }>(deps: D, m: ServiceMetrics) {
  const byRoute = new Map<PointRoute, D>()
  const depsFor = (route: PointRoute) => {
    let d = byRoute.get(route)
    if (!d) byRoute.set(route, (d = { ...deps, ingest: countingIngest(deps.ingest, m, route) }))
    return d
  }
  const middleware = async (ctx: Ctx<D>, next: () => Promise<unknown>) => {
    const started = performance.now()
    if (ctx.method === 'POST') ctx.deps = depsFor(batchRouteOf(ctx.path))
    let failed = false
    try {
      await next()
    } catch (err) {
      failed = true
      throw err
    } finally {
      const route = ctx._matchedRoute ? String(ctx._matchedRoute) : DIRECT.has(ctx.path) ? ctx.path : 'other'
      m.httpRequests.inc({ route, method: ctx.method, code: failed ? '500' : String(ctx.status) })
      m.httpDuration.observe({ route }, (performance.now() - started) / 1000)
    }
  }
  return { middleware, depsFor }
}

/** Counts a worker's jobs: finished, failed, their run time; points stored by persist jobs; alert delivery outcomes. */
export function observeWorker(key: QueueKey, worker: Worker, m: ServiceMetrics): void {
  const ran = (job: Job) =>
    job.processedOn && job.finishedOn && m.jobDuration.observe({ queue: key }, Math.max(0, job.finishedOn - job.processedOn) / 1000)
  worker.on('completed', (job, result: unknown) => {
    m.jobsCompleted.inc({ queue: key })
    ran(job)
    if (key === 'ingest' && job.name === 'persist-points')
      m.pointsStored.inc(Number((result as { points?: number } | undefined)?.points) || 0)
    if (key === 'deliver')
      m.deliveries.inc({ outcome: (result as { status?: string } | undefined)?.status === 'delivered' ? 'delivered' : 'dropped' })
  })
  worker.on('failed', (job) => {
    m.jobsFailed.inc({ queue: key })
    if (job) ran(job)
    if (key === 'deliver') m.deliveries.inc({ outcome: 'failed' })
  })
}
