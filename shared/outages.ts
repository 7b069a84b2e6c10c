// A dependency being down (PostgreSQL, Redis) is one event, not one error per
// request or per job: the first failure logs one warning, a probe then checks
// every second, and one line says when it answers again. Requests meanwhile
// are answered 503 (api/middleware/errors.ts) without a stack in the log.
import postgres from 'postgres'
import { unavailable, type AppError } from './errors.js'
import type { Logger } from './log.js'

export type Dependency = 'postgres' | 'redis'

// Errors of a connection that could not be made or was lost, as postgres.js and ioredis report them.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
])
// PostgreSQL refusing because it is shutting down, starting, in recovery or out of connections.
const PG_DOWN_CODES = new Set(['57P01', '57P02', '57P03', '53300', '25006'])
const REDIS_DOWN =
  /^(Connection is closed|Stream isn't writeable|Reached the max retries per request|connect E[A-Z]+|read E[A-Z]+|write E[A-Z]+|LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)/

/** Which dependency an error says is unreachable, if it says so. */
export function dependencyDown(err: unknown): Dependency | undefined {
  if (!err || typeof err !== 'object') return undefined
  const e = err as { code?: unknown; message?: unknown; name?: unknown }
  const code = typeof e.code === 'string' ? e.code : ''
  // postgres.js marks errors of queries with the query (and PostgresError is its server errors).
  if (err instanceof postgres.PostgresError || 'query' in err) {
    return NETWORK_CODES.has(code) || code.startsWith('08') || PG_DOWN_CODES.has(code) ? 'postgres' : undefined
  }
  if (e.name === 'MaxRetriesPerRequestError') return 'redis'
  return typeof e.message === 'string' && REDIS_DOWN.test(e.message) ? 'redis' : undefined
}

const LABEL: Record<Dependency, string> = { postgres: 'PostgreSQL', redis: 'Redis' }

/** The answer to a request that needed a dependency that is down. */
export function unavailableFor(dep: Dependency): AppError {
  return unavailable(`${dep === 'postgres' ? 'the database' : 'the queue (Redis)'} is unavailable, retry shortly`)
}

export class Outages {
  private readonly since = new Map<Dependency, number>()
  private readonly timers = new Map<Dependency, NodeJS.Timeout>()
  private closed = false

  /** `probes` answer once the dependency works again (a query, a PING). */
  /** `onBack`: called when a dependency answers again after an outage. */
  constructor(
    private readonly log: Logger,
    private readonly probes: Record<Dependency, () => Promise<unknown>>,
    private readonly onBack: (dep: Dependency) => void = () => {},
    private readonly probeEveryMs = 1000,
  ) {}

  /** Records a failure; only the first of an outage is logged. */
  down(dep: Dependency, err: unknown): void {
    if (this.since.has(dep) || this.closed) return
    this.since.set(dep, Date.now())
    this.log.warn(`${LABEL[dep]} unavailable`, { dependency: dep, error: (err as Error)?.message ?? String(err) })
    this.probe(dep)
  }

  /** Records an error if it is a dependency being down; returns which. */
  report(err: unknown): Dependency | undefined {
    const dep = dependencyDown(err)
    if (dep) this.down(dep, err)
    return dep
  }

  isDown(dep: Dependency): boolean {
    return this.since.has(dep)
  }

  private probe(dep: Dependency): void {
    const timer = setTimeout(() => {
      this.probes[dep]().then(
        () => {
          const since = this.since.get(dep)
          this.since.delete(dep)
          this.timers.delete(dep)
          if (since === undefined || this.closed) return
          this.log.info(`${LABEL[dep]} available again`, { dependency: dep, down_ms: Date.now() - since })
          this.onBack(dep)
        },
        () => this.closed || this.probe(dep),
      )
    }, this.probeEveryMs)
    timer.unref()
    this.timers.set(dep, timer)
  }

  close(): void {
    this.closed = true
    for (const t of this.timers.values()) clearTimeout(t)
    this.timers.clear()
  }
}
