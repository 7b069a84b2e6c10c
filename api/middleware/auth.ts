// Authentication for v1 routes: `Authorization: Bearer <API key>` and/or the
// `service_session` cookie, as each route allows. Session-authenticated
// writes must carry the session's CSRF token in X-Service-CSRF.
import { forbidden, unauthorized } from '../../shared/errors.js'
import { constantTimeEqual } from '../../shared/auth/secrets.js'
import { resolveSession, SESSION_COOKIE } from '../../shared/auth/sessions.js'
import type { AuthKind, Ctx, Middleware } from '../context.js'

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

function bearerToken(ctx: Ctx): string | undefined {
  const header = ctx.get('authorization')
  if (!header) return undefined
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  // A present but unusable Authorization header is a failed attempt, not "no credentials".
  return m ? m[1] : ''
}

/** Requires one of the given kinds of credential; sets ctx.state.account. */
export function auth(...allowed: AuthKind[]): Middleware {
  return async (ctx, next) => {
    const bearer = bearerToken(ctx)
    if (bearer !== undefined) {
      const resolved = bearer ? await ctx.deps.keys.resolve(bearer) : null
      if (!resolved) throw unauthorized('invalid API key')
      if (!allowed.includes('bearer'))
        throw forbidden('session_required', 'this route requires a dashboard session; API keys are not accepted here')
      ctx.state.account = resolved.account
      ctx.state.apiKeyId = resolved.keyId
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
      ctx.state.account = found.account
      ctx.state.session = found.session
      ctx.state.authKind = 'session'
      return next()
    }
    throw unauthorized(
      allowed.includes('bearer') ? 'missing credentials: send Authorization: Bearer <API key>' : 'missing credentials: sign in first',
    )
  }
}
