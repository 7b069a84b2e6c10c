// Dashboard sessions: an opaque random cookie, stored only as its sha256.
import type { Db } from '../db.js'
import { findAccountById, type Account } from '../accounts/repo.js'
import { constantTimeEqual, randomToken, sha256 } from './secrets.js'

export const SESSION_COOKIE = 'service_session'

export interface Session {
  id: string
  accountId: string
  csrfToken: string
  expiresAt: Date
}

/** Starts a session; the returned token goes into the cookie and is not kept anywhere. */
export async function createSession(sql: Db, accountId: string, ttlHours: number): Promise<{ token: string; session: Session }> {
  const token = randomToken(32)
  const csrf = randomToken(24)
  const [row] = await sql<{ id: string; expires_at: Date }[]>`
    insert into sessions (account_id, token_hash, csrf_token, expires_at)
    values (${accountId}, ${sha256(token)}, ${csrf}, now() + make_interval(hours => ${ttlHours}))
    returning id, expires_at`
  return { token, session: { id: row.id, accountId, csrfToken: csrf, expiresAt: row.expires_at } }
}

/**
 * Resolves a cookie value to its live session and account. The lookup is by
 * hash (an attacker cannot steer the hash, so index timing tells nothing) and
 * the stored hash is compared again in constant time.
 */
export async function resolveSession(sql: Db, token: string): Promise<{ session: Session; account: Account } | null> {
  if (!token || token.length > 200) return null
  const hash = sha256(token)
  const [row] = await sql<{ id: string; account_id: string; csrf_token: string; expires_at: Date; token_hash: Buffer }[]>`
    select id, account_id, csrf_token, expires_at, token_hash from sessions
    where token_hash = ${hash} and revoked_at is null and expires_at > now()`
  if (!row || !constantTimeEqual(row.token_hash, hash)) return null
  const account = await findAccountById(sql, row.account_id)
  if (!account) return null
  return { session: { id: row.id, accountId: row.account_id, csrfToken: row.csrf_token, expiresAt: row.expires_at }, account }
}

/** Revokes a session server-side; the cookie stops working at once. */
export async function revokeSession(sql: Db, sessionId: string): Promise<void> {
  await sql`update sessions set revoked_at = now() where id = ${sessionId} and revoked_at is null`
}

/** Revokes every live session of an account but `keep` (the one changing its password); returns how many. */
export async function revokeAccountSessions(sql: Db, accountId: string, keep?: string): Promise<number> {
  const res = keep
    ? await sql`update sessions set revoked_at = now() where account_id = ${accountId} and revoked_at is null and id <> ${keep}`
    : await sql`update sessions set revoked_at = now() where account_id = ${accountId} and revoked_at is null`
  return res.count
}

/** Deletes sessions that expired or were revoked more than a day ago, and old reset links (run by the maintenance schedule). */
export async function purgeSessions(sql: Db, now: Date): Promise<number> {
  const res = await sql`delete from sessions where expires_at < ${now} - interval '1 day' or revoked_at < ${now} - interval '1 day'`
  // Password-reset links are an hour's credential: kept a day past their end (for a support question), then gone.
  await sql`delete from password_resets where expires_at < ${now} - interval '1 day'`
  return res.count
}
