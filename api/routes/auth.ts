// Sign-up, sign-in, sign-out and "who am I" (docs/decisions.md §2).
import { accountJson } from '../../shared/accounts/json.js'
import { Credentials, LoginBody, SessionResponse } from '../../shared/accounts/schema.js'
import { logIn, markSignIn, signUp } from '../../shared/accounts/service.js'
import { createSession, revokeSession, SESSION_COOKIE } from '../../shared/auth/sessions.js'
import { clearLoginThrottle, throttleLogin, throttleSignup } from '../../shared/auth/throttle.js'
import { checkSecondFactor } from '../../shared/auth/two-factor.js'
import type { Account } from '../../shared/accounts/repo.js'
import { accountOf, type Ctx } from '../context.js'
import type { Routes } from '../route.js'

async function startSession(ctx: Ctx, account: Account): Promise<void> {
  const { config, sql } = ctx.deps
  const { token, session } = await createSession(sql, account.id, config.sessionTtlHours)
  ctx.cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: config.env === 'production',
    expires: session.expiresAt,
    overwrite: true,
  })
  ctx.body = { account: accountJson(account), csrf_token: session.csrfToken }
}

export function authRoutes(routes: Routes): void {
  routes
    .add(
      {
        method: 'post',
        path: '/api/v1/auth/signup',
        tag: 'auth',
        summary: 'Create an account and start a dashboard session',
        body: Credentials,
        responses: { 201: { description: 'Account created; the session cookie is set', schema: SessionResponse } },
        errors: [409, 429],
        audit: true,
      },
      async (ctx, { body }) => {
        await throttleSignup(ctx.deps.redis, ctx.deps.config, ctx.ip)
        const account = await signUp(ctx.deps.sql, body.email, body.password, 'free', ctx.deps.config.passwordHashCost)
        await startSession(ctx, account)
        ctx.state.audit = {
          accountId: account.id,
          actorId: account.id,
          actorEmail: account.email,
          target: `account:${account.id}`,
          summary: { after: { email: account.email } },
        }
        ctx.status = 201
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/auth/login',
        tag: 'auth',
        body: LoginBody,
        summary: 'Start a dashboard session; with two-factor sign-in on, also a code (401 two_factor_required without one)',
        responses: { 200: { description: 'Signed in; the session cookie is set', schema: SessionResponse } },
        errors: [401, 429],
      },
      async (ctx, { body }) => {
        const { redis, config, sql } = ctx.deps
        await throttleLogin(redis, config, ctx.ip, body.email)
        const account = await logIn(sql, body.email, body.password, config.passwordHashCost)
        await checkSecondFactor(sql, account.id, body.code)
        await startSession(ctx, account)
        await markSignIn(sql, account.id)
        await clearLoginThrottle(redis, config, body.email)
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/auth/logout',
        audit: false,
        role: 'person',
        tag: 'auth',
        summary: 'End the dashboard session (revoked server-side)',
        auth: ['session'],
        responses: { 204: { description: 'Signed out' } },
        errors: [403],
      },
      async (ctx) => {
        await revokeSession(ctx.deps.sql, ctx.state.session!.id)
        ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/', expires: new Date(0) })
        ctx.status = 204
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/auth/me',
        tag: 'auth',
        summary: 'The calling account',
        auth: ['bearer', 'session'],
        responses: { 200: { description: 'The account (and the CSRF token, for a session)', schema: SessionResponse } },
      },
      (ctx) => {
        ctx.body = { account: accountJson(accountOf(ctx)), ...(ctx.state.session ? { csrf_token: ctx.state.session.csrfToken } : {}) }
      },
    )
}
