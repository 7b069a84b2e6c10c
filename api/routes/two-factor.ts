// Two-factor sign-in: status, set-up, turning it on with a first code (which returns the
// recovery codes once) and off. Sign-in itself takes the code in POST /api/v1/auth/login.
import {
  RenewRecoveryCodesBody,
  TwoFactorCodeBody,
  TwoFactorDisableBody,
  TwoFactorSetup,
  TwoFactorStatus,
  RecoveryCodes,
} from '../../shared/accounts/schema.js'
import { disableTwoFactor, enableTwoFactor, renewRecoveryCodes, startTwoFactor, twoFactorStatus } from '../../shared/auth/two-factor.js'
import { clearLoginThrottle, throttleLogin } from '../../shared/auth/throttle.js'
import { personOf } from '../context.js'
import type { Routes } from '../route.js'

export function twoFactorRoutes(routes: Routes): void {
  const common = { tag: 'auth', auth: ['session' as const] }
  routes
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/auth/2fa',
        role: 'person',
        summary: 'Whether two-factor sign-in is on, and how many recovery codes are left',
        responses: { 200: { description: 'Status', schema: TwoFactorStatus } },
      },
      async (ctx) => {
        ctx.body = await twoFactorStatus(ctx.deps.sql, personOf(ctx).id)
      },
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/auth/2fa/setup',
        role: 'person',
        summary: 'Start setting up an authenticator app: a new TOTP secret, pending until a first code confirms it',
        errors: [403, 409],
        responses: { 200: { description: 'The secret to enter in the app', schema: TwoFactorSetup } },
      },
      async (ctx) => {
        ctx.body = await startTwoFactor(ctx.deps.sql, personOf(ctx))
      },
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/auth/2fa/enable',
        role: 'person',
        summary:
          'Turn two-factor sign-in on with a code of the app; every other session of the account is signed out; answers the ten one-time recovery codes, shown only here',
        body: TwoFactorCodeBody,
        errors: [403, 409],
        responses: { 200: { description: 'On; keep the recovery codes somewhere safe', schema: RecoveryCodes } },
      },
      async (ctx, { body }) => {
        ctx.body = { recovery_codes: await enableTwoFactor(ctx.deps.sql, personOf(ctx).id, body.code, ctx.state.session!.id) }
      },
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/auth/2fa/recovery-codes',
        role: 'person',
        summary: 'Replace the recovery codes with ten new ones (the old ones stop working); takes a code of the app or a recovery code',
        body: RenewRecoveryCodesBody,
        errors: [403, 429],
        responses: { 200: { description: 'The new codes, shown only here', schema: RecoveryCodes } },
      },
      async (ctx, { body }) => {
        const { sql, redis, config } = ctx.deps
        const account = personOf(ctx)
        await throttleLogin(redis, config, ctx.ip, account.email)
        ctx.body = { recovery_codes: await renewRecoveryCodes(sql, account.id, body.code) }
        await clearLoginThrottle(redis, config, account.email)
      },
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/auth/2fa/disable',
        role: 'person',
        summary: 'Turn two-factor sign-in off (the password and a code of the app, or a recovery code)',
        body: TwoFactorDisableBody,
        errors: [403, 429],
        responses: { 204: { description: 'Off; the recovery codes are gone' } },
      },
      async (ctx, { body }) => {
        const { sql, redis, config } = ctx.deps
        const account = personOf(ctx)
        await throttleLogin(redis, config, ctx.ip, account.email)
        await disableTwoFactor(sql, account, body.password, body.code, config.passwordHashCost)
        await clearLoginThrottle(redis, config, account.email)
        ctx.status = 204
      },
    )
}
