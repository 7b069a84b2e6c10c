// Authentication for v1 routes: `Authorization: Bearer <API key>` and/or the
// `service_session` cookie, as each route allows. Session-authenticated
// writes must carry the session's CSRF token in X-Service-CSRF.
import { forbidden, unauthorized } from '../../shared/errors.js'
import { constantTimeEqual } from '../../shared/auth/secrets.js'
import { resolveSession, SESSION_COOKIE } from '../../shared/auth/sessions.js'
import { requireRole, type KeyScope, type Role } from '../../shared/members/roles.js'
import type { AuthKind, Ctx, Middleware } from '../context.js'

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

function bearerToken(ctx: Ctx): string | undefined {
  const header = ctx.get('authorization')
  if (!header) return undefined
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  // A present but unusable Authorization header is a failed attempt, not "no credentials".
  return m ? m[1] : ''
}

/**
 * What a route needs beyond a credential (docs/decisions.md §23): the least role a session's person must hold
 * in the active account, or 'person' for the routes about the person themself (their sessions, password,
 * two-factor, the accounts they belong to), which a person removed from the active account can still reach;
 * and whether an API key of scope `write` may call it (the ingest routes).
 */
export interface Access {
  role: Role | 'person'
  ingest?: boolean
}

/** Whether a key of this scope may call a route of this method (ingest: the route takes points). */
export function scopeAllows(scope: KeyScope, method: string, ingest: boolean): boolean {
  if (scope === 'full') return true
  if (scope === 'write') return ingest
  return method === 'GET' || method === 'HEAD'
}

export function forbiddenScope(scope: KeyScope) {
  return forbidden(
    'forbidden_scope',
    scope === 'write'
      ? 'this API key has the write scope: it may only send points (ingest routes)'
      : 'this API key has the read scope: it may only read (GET)',
  )
}

/** A key acts with at most its creator's current role; a removed creator's keys are refused. */
export function keyRole(creatorRole: Role | null, need: Role): void {
  if (!creatorRole)
    throw forbidden('forbidden_role', "this key's creator is no longer a member of the account: use a key of a current member")
  requireRole(creatorRole, need)
}

/** Requires one of the given kinds of credential, and the access the route declares; sets ctx.state.account. */
export function auth(access: Access, ...allowed: AuthKind[]): Middleware {
  return async (ctx, next) => {
    const bearer = bearerToken(ctx)
    if (bearer !== undefined) {
      // A key this process holds is answered without a promise (a busy writer's, nearly always).
      const known = bearer ? ctx.deps.keys.cached(bearer) : null
      const resolved = known === undefined ? await ctx.deps.keys.resolve(bearer!) : known
      if (!resolved) throw unauthorized('invalid API key')
      if (!allowed.includes('bearer'))
        throw forbidden('session_required', 'this route requires a dashboard session; API keys are not accepted here')
      if (!scopeAllows(resolved.scope, ctx.method, access.ingest ?? false)) throw forbiddenScope(resolved.scope)
      if (access.role !== 'person') keyRole(resolved.role, access.role)
      ctx.state.account = resolved.account
      ctx.state.apiKeyId = resolved.keyId
      ctx.state.keyScope = resolved.scope
      ctx.state.authKind = 'bearer'
      return next()
    }
    const cookie = ctx.cookies.get(SESSION_COOKIE)
    if (cookie && allowed.includes('session')) {
      const found = await resolveSession(ctx.deps.sql, cookie)
      if (!found) throw unauthorized('session expired or signed out', 'session_invalid')
      if (UNSAFE_METHODS.has(ctx.method) && !constantTimeEqual(ctx.get('x-service-csrf'), found.session.csrfToken)) {
        throw forbidden('csrf_failed', 'missing or wrong X-Service-CSRF header')
      }
      if (access.role !== 'person') {
        // Read from PostgreSQL on this very request: a removal or demotion counts at once, in every process.
        if (!found.role)
          throw forbidden(
            'not_a_member',
            'you are no longer a member of this account: switch to another (GET /api/v1/accounts, POST /api/v1/session/account)',
          )
        requireRole(found.role, access.role)
      }
      ctx.state.account = found.account
      ctx.state.person = found.person
      ctx.state.role = found.role ?? undefined
      ctx.state.session = found.session
      ctx.state.authKind = 'session'
      return next()
    }
    throw unauthorized(
      allowed.includes('bearer') ? 'missing credentials: send Authorization: Bearer <API key>' : 'missing credentials: sign in first',
    )
  }
}
