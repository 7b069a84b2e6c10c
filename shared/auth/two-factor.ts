// Two-factor sign-in (issue 30 item 4), optional per account: a TOTP secret (RFC 6238 through otplib, the
// authenticator apps' defaults: SHA-1, 6 digits, 30 s) and ten one-time recovery codes, stored hashed. Once
// enabled, signing in takes a code of the app or an unused recovery code besides the password.
import { randomInt } from 'node:crypto'
import { generateSecret, generateURI, verify } from 'otplib'
import type { Db, Sql } from '../db.js'
import { AppError, conflict, forbidden, invalid, unauthorized } from '../errors.js'
import type { Account } from '../accounts/repo.js'
import { findAccountByEmail } from '../accounts/repo.js'
import { sha256, verifyPassword } from './secrets.js'

export const RECOVERY_CODES = 10
const ISSUER = 'Metrics'
// No 0/o, 1/l/i: a code copied from paper is read back right.
const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'

interface TotpRow {
  totp_secret: string | null
  totp_pending_secret: string | null
  totp_enabled_at: Date | null
  totp_last_step: string | null
}

async function totpOf(sql: Db, accountId: string): Promise<TotpRow> {
  const [row] = await sql<TotpRow[]>`select totp_secret, totp_pending_secret, totp_enabled_at, totp_last_step from accounts where id = ${accountId}`
  return row
}

export async function twoFactorStatus(sql: Db, accountId: string) {
  const row = await totpOf(sql, accountId)
  const [{ left }] = await sql<{ left: number }[]>`select count(*)::int as left from recovery_codes where account_id = ${accountId} and used_at is null`
  return { enabled: row.totp_secret !== null, enabled_at: row.totp_enabled_at?.toISOString() ?? null, recovery_codes_left: row.totp_secret ? left : 0 }
}

/** Starts setting up: a new secret waits until a first code proves the app holds it (enableTwoFactor). */
export async function startTwoFactor(sql: Db, account: Account): Promise<{ secret: string; otpauth_uri: string }> {
  if ((await totpOf(sql, account.id)).totp_secret) throw conflict('two_factor_enabled', 'two-factor sign-in is already on: turn it off first to set up another app')
  const secret = generateSecret()
  await sql`update accounts set totp_pending_secret = ${secret} where id = ${account.id}`
  return { secret, otpauth_uri: generateURI({ issuer: ISSUER, label: account.email, secret }) }
}

/** The time step of a valid code of `secret` not older than `afterStep`, or null. One step of clock drift either way. */
async function totpStep(secret: string, code: string, afterStep: string | null): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null
  const result = await verify({ secret, token: code, epochTolerance: 30, ...(afterStep !== null ? { afterTimeStep: Number(afterStep) } : {}) })
  // The TOTP strategy's result carries the time step matched (the union type also covers HOTP, which has none).
  return result.valid && 'timeStep' in result ? (result.timeStep as number) : null
}

function newRecoveryCode(): string {
  let s = ''
  for (let i = 0; i < 10; i++) s += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]
  return `${s.slice(0, 5)}-${s.slice(5)}`
}

const normalise = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '')

/** Turns two-factor sign-in on with a code of the pending secret; returns the recovery codes, shown once. */
export async function enableTwoFactor(sql: Sql, accountId: string, code: string): Promise<string[]> {
  const row = await totpOf(sql, accountId)
  if (row.totp_secret) throw conflict('two_factor_enabled', 'two-factor sign-in is already on')
  if (!row.totp_pending_secret) throw invalid('two_factor_not_started', 'start the set-up first (POST /api/v1/auth/2fa/setup)')
  const step = await totpStep(row.totp_pending_secret, code, null)
  if (step === null) throw invalid('two_factor_code_wrong', 'that code does not match: check the app\'s clock and enter the code it shows now; nothing was changed')
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode)
  const done = await sql.begin(async (tx) => {
    const [on] = await tx`
      update accounts set totp_secret = totp_pending_secret, totp_pending_secret = null, totp_enabled_at = now(), totp_last_step = ${step}
      where id = ${accountId} and totp_secret is null and totp_pending_secret = ${row.totp_pending_secret} returning id`
    if (!on) return false
    await tx`delete from recovery_codes where account_id = ${accountId}`
    await tx`insert into recovery_codes ${tx(codes.map((c) => ({ account_id: accountId, code_hash: sha256(normalise(c)) })))}`
    return true
  })
  if (!done) throw conflict('two_factor_enabled', 'two-factor sign-in was set up by another request meanwhile')
  return codes
}

/**
 * Accepts a code of the app (each time step once: a code seen is never accepted again) or an unused recovery
 * code (used up here). False when neither.
 */
async function acceptCode(sql: Db, accountId: string, row: TotpRow, code: string): Promise<boolean> {
  const step = await totpStep(row.totp_secret!, code.trim(), row.totp_last_step)
  if (step !== null) {
    const [ok] = await sql`update accounts set totp_last_step = ${step} where id = ${accountId} and (totp_last_step is null or totp_last_step < ${step}) returning id`
    return Boolean(ok)
  }
  const plain = normalise(code)
  if (plain.length !== 10) return false
  // Looked up by hash: the hash of a guess cannot be steered toward a stored one, so the index's timing tells nothing.
  const [used] = await sql`update recovery_codes set used_at = now() where account_id = ${accountId} and code_hash = ${sha256(plain)} and used_at is null returning 1`
  return Boolean(used)
}

/** At sign-in, after the password: requires the second factor when the account has it on. */
export async function checkSecondFactor(sql: Db, accountId: string, code: string | undefined): Promise<void> {
  const row = await totpOf(sql, accountId)
  if (!row?.totp_secret) return
  if (!code) throw new AppError('unauthorized', 'two_factor_required', 'two-factor sign-in is on for this account: send the 6-digit code of the authenticator app (or a recovery code) in `code`')
  if (!(await acceptCode(sql, accountId, row, code))) throw unauthorized('that code is wrong or was already used', 'two_factor_invalid')
}

/** Turns two-factor sign-in off; takes the password and a code (of the app, or a recovery code). */
export async function disableTwoFactor(sql: Sql, account: Account, password: string, code: string, hashCost?: number): Promise<void> {
  const found = await findAccountByEmail(sql, account.email)
  if (!found || !(await verifyPassword(password, found.passwordHash, hashCost))) throw forbidden('wrong_password', 'the password is wrong; nothing was changed')
  const row = await totpOf(sql, account.id)
  if (!row.totp_secret) return
  if (!(await acceptCode(sql, account.id, row, code))) throw forbidden('wrong_second_factor', 'that code is wrong or was already used; nothing was changed')
  await turnOffTwoFactor(sql, account.id)
}

/** Forgets the account's TOTP secret and recovery codes (also the operator's command line, for a lost app and codes). */
export async function turnOffTwoFactor(sql: Sql, accountId: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`update accounts set totp_secret = null, totp_pending_secret = null, totp_enabled_at = null, totp_last_step = null where id = ${accountId}`
    await tx`delete from recovery_codes where account_id = ${accountId}`
  })
}

/** New recovery codes for an account with two-factor on (the old ones stop working); takes a code of the app, or a recovery code. */
export async function renewRecoveryCodes(sql: Sql, accountId: string, code: string): Promise<string[]> {
  const row = await totpOf(sql, accountId)
  if (!row.totp_secret) throw invalid('two_factor_not_started', 'two-factor sign-in is off: turn it on first (POST /api/v1/auth/2fa/setup)')
  if (!(await acceptCode(sql, accountId, row, code))) throw forbidden('wrong_second_factor', 'that code is wrong or was already used; nothing was changed')
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode)
  await sql.begin(async (tx) => {
    await tx`delete from recovery_codes where account_id = ${accountId}`
    await tx`insert into recovery_codes ${tx(codes.map((c) => ({ account_id: accountId, code_hash: sha256(normalise(c)) })))}`
  })
  return codes
}
