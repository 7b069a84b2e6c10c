// What every request handler can reach: the process's dependencies and the
// per-request state set by middleware.
import net from 'node:net'
import type Koa from 'koa'
import type { Redis } from 'ioredis'
import type { Config } from '../shared/config.js'
import type { Sql } from '../shared/db.js'
import type { Logger } from '../shared/log.js'
import type { Outages } from '../shared/outages.js'
import type { Queues } from '../shared/queues.js'
import type { ReadPool } from '../shared/read-replica.js'
import type { RedisSettings } from '../shared/redis.js'
import type { Account } from '../shared/accounts/repo.js'
import type { Session } from '../shared/auth/sessions.js'
import type { KeyScope, Role } from '../shared/members/roles.js'
import type { KeyResolver } from '../shared/auth/key-resolver.js'
import type { PointBatcher } from '../shared/ingest/batcher.js'
import type { Ingest } from '../shared/ingest/ingest.js'
import type { Limits } from '../shared/ingest/limits.js'
import type { StatDirectory } from '../shared/stats/directory.js'

export interface AppDeps {
  config: Config
  sql: Sql
  /** Lag-tolerant reads (charts, exports, the dashboard, analytics): the read replica when one is fit, else `sql`. */
  reads: ReadPool
  redis: Redis
  log: Logger
  queues: Queues
  keys: KeyResolver
  limits: Limits
  directory: StatDirectory
  batcher: PointBatcher
  ingest: Ingest
  /** A connection in subscriber mode (stat deletes announced by other processes). */
  subscriber: Redis
  /** PostgreSQL or Redis being down: logged once per outage, answered 503. */
  outages: Outages
  redisSettings: RedisSettings
}

export type AuthKind = 'bearer' | 'session'

export interface AppState {
  requestId: string
  account?: Account
  authKind?: AuthKind
  session?: Session
  /** The person signed in (session auth): their own accounts row (sql/0036_teams.sql). */
  person?: Account
  /** The person's role in `account` (session auth). */
  role?: Role
  apiKeyId?: string
  /** What the API key may do (bearer auth). */
  keyScope?: KeyScope
  /** Set on /ez, /c and /v: errors are answered with the legacy envelope. */
  legacy?: { strict: boolean }
  /** Set on the InfluxDB write routes: errors are answered with InfluxDB's JSON error body (v2 or 1.x shape). */
  influx?: 'v1' | 'v2'
  /** Set on /prometheus/api/v1/*: errors are answered in Prometheus' JSON envelope (errorType, error). */
  prometheus?: boolean
  /** Set on /otlp/v1/metrics: errors are answered as OTLP's google.rpc.Status in the request's encoding. */
  otlp?: 'protobuf' | 'json'
  input: { body?: unknown; query?: unknown; params?: Record<string, string> }
  /** What the route's audit row says, when the handler knows better than the request (api/route.ts). */
  audit?: { accountId?: string; actorId?: string; actorEmail?: string; target?: string; summary?: Record<string, unknown> }
}

export interface AppContext {
  deps: AppDeps
}

export type Ctx = Koa.ParameterizedContext<AppState, AppContext>
export type Middleware = Koa.Middleware<AppState, AppContext>

/** The authenticated account; only call behind the auth middleware. */
export function accountOf(ctx: Ctx): Account {
  if (!ctx.state.account) throw new Error('accountOf() used on a route without auth')
  return ctx.state.account
}

/** The person signed in; only call on session-only routes. */
export function personOf(ctx: Ctx): Account {
  if (!ctx.state.person) throw new Error('personOf() used on a route without session auth')
  return ctx.state.person
}

/**
 * The service's own base URL for links (embed URLs, e-mail links): PUBLIC_URL, which production
 * requires; else (development, tests) the address this connection reached. Never the Host header:
 * a client may name any host there, and the link would point at it.
 */
export function baseUrl(ctx: Ctx): string {
  if (ctx.deps.config.publicUrl) return ctx.deps.config.publicUrl.replace(/\/+$/, '')
  const { localAddress = '127.0.0.1', localPort } = ctx.req.socket
  const host = localAddress.replace(/^::ffff:/, '')
  return `http://${net.isIPv6(host) ? `[${host}]` : host}:${localPort}`
}
