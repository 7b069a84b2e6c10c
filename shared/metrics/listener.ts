// The /metrics listener: its own port (METRICS_PORT), never the public one, bound to METRICS_HOST (loopback
// by default: a scraper on the same host or network namespace, such as a platform's metrics agent). One per
// port and process: `npm run dev` runs the API and the workers in one process, and both ask for it.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Config } from '../config.js'
import type { Logger } from '../log.js'
import { ClusterGauges, type ClusterSource } from './cluster.js'
import { exposition } from './exposition.js'
import { serviceMetrics, type ServiceMetrics } from './registry.js'

export interface MetricsListener {
  /** http://host:port/metrics */
  url: string
  metrics: ServiceMetrics
  close(): Promise<void>
}

interface Shared {
  server: Server
  url: string
  users: number
}

const listening = new Map<string, Promise<Shared>>()
let gauges: ClusterGauges | undefined

/** Serves /metrics on config.metricsPort (0 picks a free port, never shared) for as long as the returned handle is open. */
export async function serveMetrics(
  config: Pick<Config, 'metricsPort' | 'metricsHost' | 'redisUrl' | 'redisPrefix'>,
  log: Logger,
  source: { sql: ClusterSource['sql'] },
): Promise<MetricsListener> {
  const metrics = serviceMetrics()
  gauges ??= new ClusterGauges(metrics)
  const cluster = gauges
  const key = `${config.metricsHost}:${config.metricsPort}`
  let entry = config.metricsPort ? listening.get(key) : undefined
  if (!entry) {
    entry = listen(config.metricsHost, config.metricsPort!, metrics, cluster, log)
    if (config.metricsPort) listening.set(key, entry)
  }
  const shared = await entry
  shared.users++
  const remove = cluster.add({ sql: source.sql, config })
  let closed = false
  return {
    url: shared.url,
    metrics,
    async close() {
      if (closed) return
      closed = true
      await remove()
      if (--shared.users > 0) return
      listening.delete(key)
      await new Promise<void>((resolve) => shared.server.close(() => resolve()))
    },
  }
}

async function listen(host: string, port: number, metrics: ServiceMetrics, cluster: ClusterGauges, log: Logger): Promise<Shared> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n')
      return
    }
    const cpu = process.cpuUsage()
    cluster
      .refresh()
      .then(() => {
        // Counted before the text is made, so a scrape reports the ones before it.
        const used = process.cpuUsage(cpu)
        metrics.scrapes.inc()
        metrics.scrapeCpu.inc((used.user + used.system) / 1e6)
        return exposition(metrics.registry)
      })
      .then((text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : text))
      .catch((err: Error) => {
        log.warn('metrics scrape failed', { error: err.message })
        res.writeHead(500, { 'content-type': 'text/plain' }).end('scrape failed\n')
      })
  })
  server.listen(port, host)
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject))
  server.unref()
  const { port: bound } = server.address() as AddressInfo
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`
  log.info(`metrics on ${url}`)
  return { server, url, users: 0 }
}
