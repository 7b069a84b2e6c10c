// Two-factor sign-in, optional per account: a TOTP secret (RFC 6238 through otplib, the
// authenticator apps' defaults: SHA-1, 6 digits, 30 s) and ten one-time recovery codes, stored hashed. Once
// enabled, signing in takes a code of the app or an unused recovery code besides the password. Each code of the
// app is accepted once per time step and purpose, and a run of wrong codes locks the app's
// codes until a recovery code or a password reset (item 6).
import { randomInt } from 'node:crypto'
import { generateSecret, generateURI, verify } from 'otplib'
import QRCode from 'qrcode'
import type { Db, Sql } from '../db.js'
import { AppError, conflict, forbidden, invalid, unauthorized } from '../errors.js'
import type { Account } from '../accounts/repo.js'
import { findAccountByEmail } from '../accounts/repo.js'
import { sha256, verifyPassword } from './secrets.js'
import { revokeAccountSessions } from './sessions.js'

export const RECOVERY_CODES = 10
const ISSUER = 'Metrics'
// No 0/o, 1/l/i: a code copied from paper is read back right.
const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'
/**
 * Wrong codes in a row before the app's codes are refused. With one step of drift either way, three codes of
 * a million are right at any moment: ten guesses win with odds of 3 in 100,000, where a minute's throttle
 * alone allowed 1,440 guesses a day, for ever. A recovery code or a password reset lifts the lock.
 */
export const TOTP_MAX_FAILURES = 10

/** What a code is accepted for: the same code may serve each once (in its 30 s step), never one twice. */
export type CodePurpose = 'sign-in' | 'manage' | 'delete'

interface TotpRow {
  totp_secret: string | null
  totp_pending_secret: string | null
  totp_enabled_at: Date | null
  totp_locked_at: Date | null
}

async function totpOf(sql: Db, accountId: string): Promise<TotpRow> {
  const [row] = await sql<
    TotpRow[]
  >`select totp_secret, totp_pending_secret, totp_enabled_at, totp_locked_at from accounts where id = ${accountId}`
  return row
}

export async function twoFactorStatus(sql: Db, accountId: string) {
  const row = await totpOf(sql, accountId)
  const [{ left }] = await sql<
    { left: number }[]
  >`select count(*)::int as left from recovery_codes where account_id = ${accountId} and used_at is null`
  return {
    enabled: row.totp_secret !== null,
    enabled_at: row.totp_enabled_at?.toISOString() ?? null,
    recovery_codes_left: row.totp_secret ? left : 0,
    locked: row.totp_secret !== null && row.totp_locked_at !== null,
  }
}

/** Whether the account has two-factor sign-in on (deleting the account then takes a code too). */
export async function twoFactorOn(sql: Db, accountId: string): Promise<boolean> {
  return (await totpOf(sql, accountId))?.totp_secret != null
}

/** Starts setting up: a new secret waits until a first code proves the app holds it (enableTwoFactor). */
export async function startTwoFactor(sql: Db, account: Account): Promise<{ secret: string; otpauth_uri: string; qr_code: string }> {
  if ((await totpOf(sql, account.id)).totp_secret)
    throw conflict('two_factor_enabled', 'two-factor sign-in is already on: turn it off first to set up another app')
  const secret = generateSecret()
  await sql`update accounts set totp_pending_secret = ${secret} where id = ${account.id}`
  const uri = generateURI({ issuer: ISSUER, label: account.email, secret })
  // Drawn here as an SVG data: URL, which the pages' Content-Security-Policy allows as an image (img-src data:),
  // so no script draws it and the secret is never sent to anyone else to draw.
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return { secret, otpauth_uri: uri, qr_code: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` }
}

/** The time step of a valid code of `secret` not older than `afterStep`, or null. One step of clock drift either way. */
async function totpStep(secret: string, code: string, afterStep: string | null): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null
  const result = await verify({
    secret,
    token: code,
    epochTolerance: 30,
    ...(afterStep !== null ? { afterTimeStep: Number(afterStep) } : {}),
  })
  // The TOTP strategy's result carries the time step matched (the union type also covers HOTP, which has none).
  return result.valid && 'timeStep' in result ? (result.timeStep as number) : null
}

function newRecoveryCode(): string {
  let s = ''
  for (let i = 0; i < 10; i++) s += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]
  return `${s.slice(0, 5)}-${s.slice(5)}`
}

const normalise = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '')

/**
 * Turns two-factor sign-in on with a code of the pending secret; returns the recovery codes, shown once. Every
 * other session of the account is revoked (`keep` stays), as a password change does: a session opened with
 * the password alone (perhaps by whoever made the owner turn this on) must not outlive the change.
 */
export async function enableTwoFactor(sql: Sql, accountId: string, code: string, keep?: string): Promise<string[]> {
  const row = await totpOf(sql, accountId)
  if (row.totp_secret) throw conflict('two_factor_enabled', 'two-factor sign-in is already on')
  if (!row.totp_pending_secret) throw invalid('two_factor_not_started', 'start the set-up first (POST /api/v1/auth/2fa/setup)')
  const step = await totpStep(row.totp_pending_secret, code, null)
  if (step === null)
    throw invalid(
      'two_factor_code_wrong',
      "that code does not match: check the app's clock and enter the code it shows now; nothing was changed",
    )
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode)
  const done = await sql.begin(async (tx) => {
    const [on] = await tx`
      update accounts set totp_secret = totp_pending_secret, totp_pending_secret = null, totp_enabled_at = now(), totp_failures = 0, totp_locked_at = null
      where id = ${accountId} and totp_secret is null and totp_pending_secret = ${row.totp_pending_secret} returning id`
    if (!on) return false
    // Steps seen for an earlier secret say nothing of this one's codes.
    await tx`delete from totp_steps where account_id = ${accountId}`
    await revokeAccountSessions(tx, accountId, keep)
    await tx`delete from recovery_codes where account_id = ${accountId}`
    await tx`insert into recovery_codes ${tx(codes.map((c) => ({ account_id: accountId, code_hash: sha256(normalise(c)) })))}`
    return true
  })
  if (!done) throw conflict('two_factor_enabled', 'two-factor sign-in was set up by another request meanwhile')
  return codes
}

const lockedError = () =>
  new AppError(
    'forbidden',
    'two_factor_locked',
    `two-factor sign-in is locked after ${TOTP_MAX_FAILURES} wrong codes: use one of your recovery codes instead, or reset the password by mail (either lifts the lock); nothing was changed`,
  )

/**
 * Accepts a code of the app (once per time step and purpose) or an unused recovery code (used up here), else
 * counts a failure; at TOTP_MAX_FAILURES in a row the app's codes are refused (two_factor_locked) until a
 * recovery code is accepted here or the password is reset. False when the code is wrong.
 */
async function acceptCode(sql: Db, accountId: string, row: TotpRow, code: string, purpose: CodePurpose): Promise<boolean> {
  const plain = normalise(code)
  if (plain.length === 10) {
    // Looked up by hash: the hash of a guess cannot be steered toward a stored one, so the index's timing tells nothing.
    const [used] =
      await sql`update recovery_codes set used_at = now() where account_id = ${accountId} and code_hash = ${sha256(plain)} and used_at is null returning 1`
    if (used) {
      await sql`update accounts set totp_failures = 0, totp_locked_at = null where id = ${accountId}`
      return true
    }
  } else {
    if (row.totp_locked_at) throw lockedError()
    const [seen] = await sql<{ step: string }[]>`select step from totp_steps where account_id = ${accountId} and purpose = ${purpose}`
    const step = await totpStep(row.totp_secret!, code.trim(), seen?.step ?? null)
    if (step !== null) {
      const [ok] = await sql`
        insert into totp_steps (account_id, purpose, step) values (${accountId}, ${purpose}, ${step})
        on conflict (account_id, purpose) do update set step = excluded.step where totp_steps.step < excluded.step returning 1`
      if (ok) {
        await sql`update accounts set totp_failures = 0 where id = ${accountId} and totp_failures <> 0`
        return true
      }
    }
  }
  const [after] = await sql<{ locked: boolean }[]>`
    update accounts set totp_failures = totp_failures + 1,
      totp_locked_at = case when totp_failures + 1 >= ${TOTP_MAX_FAILURES} then coalesce(totp_locked_at, now()) else totp_locked_at end
    where id = ${accountId} returning totp_locked_at is not null as locked`
  if (after?.locked && !row.totp_locked_at) throw lockedError()
  return false
}

/** A password reset lifts the lock (the mailbox is the other factor then); run in the reset's transaction. */
export async function unlockTwoFactor(sql: Db, accountId: string): Promise<void> {
  await sql`update accounts set totp_failures = 0, totp_locked_at = null where id = ${accountId}`
}

/** At sign-in, after the password: requires the second factor when the account has it on. */
export async function checkSecondFactor(sql: Db, accountId: string, code: string | undefined): Promise<void> {
  const row = await totpOf(sql, accountId)
  if (!row?.totp_secret) return
  if (!code)
    throw new AppError(
      'unauthorized',
      'two_factor_required',
      'two-factor sign-in is on for this account: send the 6-digit code of the authenticator app (or a recovery code) in `code`',
    )
  if (!(await acceptCode(sql, accountId, row, code, 'sign-in')))
    throw unauthorized('that code is wrong or was already used', 'two_factor_invalid')
}

/**
 * Before a destructive act of a signed-in account (deleting it): with two-factor on, a current code (of the
 * app, or a recovery code) is required besides the password, as at sign-in. 403 with what is missing.
 */
export async function requireSecondFactor(sql: Db, accountId: string, code: string | undefined, purpose: CodePurpose): Promise<void> {
  const row = await totpOf(sql, accountId)
  if (!row?.totp_secret) return
  if (!code?.trim())
    throw forbidden(
      'second_factor_required',
      'two-factor sign-in is on for this account: send a current code of the authenticator app (or a recovery code) in `code`; nothing was changed',
    )
  if (!(await acceptCode(sql, accountId, row, code, purpose)))
    throw forbidden('wrong_second_factor', 'that code is wrong or was already used; nothing was changed')
}

/** Turns two-factor sign-in off; takes the password and a code (of the app, or a recovery code). */
export async function disableTwoFactor(sql: Sql, account: Account, password: string, code: string, hashCost?: number): Promise<void> {
  const found = await findAccountByEmail(sql, account.email)
  if (!found || !(await verifyPassword(password, found.passwordHash, hashCost)))
    throw forbidden('wrong_password', 'the password is wrong; nothing was changed')
  const row = await totpOf(sql, account.id)
  if (!row.totp_secret) return
  if (!(await acceptCode(sql, account.id, row, code, 'manage')))
    throw forbidden('wrong_second_factor', 'that code is wrong or was already used; nothing was changed')
  await turnOffTwoFactor(sql, account.id)
}

/** Forgets the account's TOTP secret and recovery codes (also the operator's command line, for a lost app and codes). */
export async function turnOffTwoFactor(sql: Sql, accountId: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`update accounts set totp_secret = null, totp_pending_secret = null, totp_enabled_at = null, totp_failures = 0, totp_locked_at = null where id = ${accountId}`
    await tx`delete from totp_steps where account_id = ${accountId}`
    await tx`delete from recovery_codes where account_id = ${accountId}`
  })
}

/** New recovery codes for an account with two-factor on (the old ones stop working); takes a code of the app, or a recovery code. */
export async function renewRecoveryCodes(sql: Sql, accountId: string, code: string): Promise<string[]> {
  const row = await totpOf(sql, accountId)
  if (!row.totp_secret) throw invalid('two_factor_not_started', 'two-factor sign-in is off: turn it on first (POST /api/v1/auth/2fa/setup)')
  if (!(await acceptCode(sql, accountId, row, code, 'manage')))
    throw forbidden('wrong_second_factor', 'that code is wrong or was already used; nothing was changed')
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode)
  await sql.begin(async (tx) => {
    await tx`delete from recovery_codes where account_id = ${accountId}`
    await tx`insert into recovery_codes ${tx(codes.map((c) => ({ account_id: accountId, code_hash: sha256(normalise(c)) })))}`
  })
  return codes
}
