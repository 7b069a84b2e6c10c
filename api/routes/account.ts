// Account settings (its time zone) and account recovery and removal (docs/decisions.md §19): password reset by mail, password change, and
// deleting the account with all of its data.
import {
  changePassword,
  confirmPasswordReset,
  deleteAccount,
  deletionCheck,
  forgetAccountInRedis,
  requestPasswordReset,
} from '../../shared/accounts/recovery.js'
import {
  AccountResponse,
  ChangePasswordBody,
  DeleteAccountBody,
  DeletionCheck,
  PatchAccountBody,
  PasswordResetAccepted,
  PasswordResetBody,
  PasswordResetConfirmBody,
  PasswordResetDone,
} from '../../shared/accounts/schema.js'
import { accountJson } from '../../shared/accounts/json.js'
import { findAccountById, setAccountTimeZone } from '../../shared/accounts/repo.js'
import { SESSION_COOKIE } from '../../shared/auth/sessions.js'
import { clearLoginThrottle, throttleLogin, throttlePasswordReset } from '../../shared/auth/throttle.js'
import { publishStatDeleted } from '../../shared/stats/directory.js'
import { accountOf, baseUrl, personOf } from '../context.js'
import type { Routes } from '../route.js'

export function accountRoutes(routes: Routes): void {
  routes
    .add(
      {
        method: 'post',
        path: '/api/v1/auth/password-reset',
        tag: 'auth',
        body: PasswordResetBody,
        errors: [429],
        summary: 'Mail a password-reset link (valid 1 hour, once) to the address, if it has an account; the answer is the same either way',
        responses: { 202: { description: 'Accepted (whether or not the address has an account)', schema: PasswordResetAccepted } },
      },
      async (ctx, { body }) => {
        const { config, sql, redis, log } = ctx.deps
        await throttlePasswordReset(redis, config, ctx.ip, body.email)
        // Not awaited: the answer and its timing must not tell whether the address has an account.
        void requestPasswordReset(config, sql, body.email, baseUrl(ctx)).catch((err: Error) =>
          log.warn('password reset mail not sent', { error: err.message }),
        )
        ctx.status = 202
        ctx.body = { status: 'accepted' }
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/auth/password-reset/confirm',
        audit: true,
        tag: 'auth',
        body: PasswordResetConfirmBody,
        summary: 'Set a new password with the token of a reset link; every session of the account is revoked (API keys stay)',
        responses: { 200: { description: 'Changed; sign in with the new password', schema: PasswordResetDone } },
      },
      async (ctx, { body }) => {
        const { sql, config } = ctx.deps
        const accountId = await confirmPasswordReset(sql, body.token, body.password, config.passwordHashCost)
        const account = await findAccountById(sql, accountId)
        ctx.state.audit = {
          accountId,
          actorId: accountId,
          actorEmail: account?.email,
          target: `person:${accountId}`,
          summary: { after: { password: 'changed by reset link' } },
        }
        ctx.body = { account: { email: account?.email ?? '' }, sessions_revoked: true }
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/auth/password',
        role: 'person',
        tag: 'auth',
        auth: ['session'],
        body: ChangePasswordBody,
        errors: [403, 429],
        summary: "Change the password; the account's other sessions are revoked, this one stays",
        responses: { 204: { description: 'Changed' } },
      },
      async (ctx, { body }) => {
        const { sql, config, redis } = ctx.deps
        const account = personOf(ctx) // the password is the person's
        await throttleLogin(redis, config, ctx.ip, account.email)
        await changePassword(sql, account, ctx.state.session!.id, body.current_password, body.new_password, config.passwordHashCost)
        await clearLoginThrottle(redis, config, account.email)
        ctx.status = 204
      },
    )
    .add(
      {
        method: 'patch',
        path: '/api/v1/account',
        role: 'admin',
        tag: 'auth',
        auth: ['bearer', 'session'],
        body: PatchAccountBody,
        errors: [403],
        summary: "Change the account's settings: its time zone (null: each browser's own)",
        responses: { 200: { description: 'The account as changed', schema: AccountResponse } },
      },
      async (ctx, { body }) => {
        const account = await setAccountTimeZone(ctx.deps.sql, accountOf(ctx).id, body.time_zone)
        ctx.body = { account: accountJson(account!) }
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/account/deletion',
        role: 'owner',
        tag: 'auth',
        auth: ['session'],
        summary:
          'Whether the account can be deleted now (not while a subscription may still be charged: then where to cancel it), and whether a two-factor code is needed',
        responses: { 200: { description: 'What deleting takes', schema: DeletionCheck } },
      },
      async (ctx) => {
        ctx.body = await deletionCheck(ctx.deps.sql, accountOf(ctx).id)
      },
    )
    .add(
      {
        method: 'delete',
        path: '/api/v1/account',
        role: 'owner',
        // The account's audit log goes with it (every table of the account is emptied): no row could outlive it here.
        audit: false,
        tag: 'auth',
        auth: ['session'],
        body: DeleteAccountBody,
        errors: [403, 409, 429],
        summary:
          'Delete the account and all of its data: stats, points, alerts, keys, shares, dashboards, imports, sessions (its free-tier slot is not given back)',
        responses: { 204: { description: 'Deleted; the session cookie is cleared' } },
      },
      async (ctx, { body }) => {
        const { sql, config, redis, keys, directory, log } = ctx.deps
        const account = accountOf(ctx)
        await throttleLogin(redis, config, ctx.ip, account.email)
        const removed = await deleteAccount(sql, account, body.password, body.code, config.passwordHashCost)
        // Other processes see the keys gone within a second (the resolver re-reads them); this one at once.
        for (const id of removed.apiKeyIds) keys.evict(id)
        for (const name of removed.statNames) {
          directory.evict(account.id, name)
          await publishStatDeleted(redis, config, account.id, name).catch((err) =>
            log.warn('could not announce a stat delete; other processes forget it within seconds', { error: err }),
          )
        }
        // Counters and idempotency keys expire by themselves within a week; gone now, without holding the answer.
        void forgetAccountInRedis(redis, config, account.id, removed.statIds).catch((err: Error) =>
          log.warn("could not clear the deleted account's keys in Redis; they expire by themselves", { error: err.message }),
        )
        ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/', expires: new Date(0) })
        ctx.status = 204
      },
    )
}
