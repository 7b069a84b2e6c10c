// What every request handler can reach: the process's dependencies and the
// per-request state set by middleware.
import type Koa from 'koa'
import type { Redis } from 'ioredis'
import type { Config } from '../shared/config.js'
import type { Sql } from '../shared/db.js'
import type { Logger } from '../shared/log.js'
import type { Queues } from '../shared/queues.js'
import type { Account } from '../shared/accounts/repo.js'
import type { Session } from '../shared/auth/sessions.js'
import type { KeyResolver } from '../shared/auth/key-resolver.js'

export interface AppDeps {
  config: Config
  sql: Sql
  redis: Redis
  log: Logger
  queues: Queues
  keys: KeyResolver
}

export type AuthKind = 'bearer' | 'session'

export interface AppState {
  requestId: string
  account?: Account
  authKind?: AuthKind
  session?: Session
  apiKeyId?: string
  input: { body?: unknown; query?: unknown; params?: Record<string, string> }
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
