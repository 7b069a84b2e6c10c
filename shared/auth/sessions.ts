// Dashboard sessions: an opaque random cookie, stored only as its sha256.
import type { Db } from '../db.js'
import { findAccountById, type Account } from '../accounts/repo.js'
import type { Role } from '../members/roles.js'
import { constantTimeEqual, randomToken, sha256 } from './secrets.js'

export const SESSION_COOKIE = 'service_session'

export interface Session {
  id: string
  /** The person signed in (their own accounts row: sql/0036_teams.sql). */
  accountId: string
  /** The account the session acts on (docs/decisions.md §23): the person's own unless switched. */
  activeAccountId: string
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
  return { token, session: { id: row.id, accountId, activeAccountId: accountId, csrfToken: csrf, expiresAt: row.expires_at } }
}

/**
 * Resolves a cookie value to its live session, its person, the account it acts on and the person's role
 * there (null once removed). The role is read on every request, never cached, so that a removal or a
 * demotion counts from the member's next request in every process. The lookup is by hash (an attacker
 * cannot steer the hash, so index timing tells nothing) and the stored hash is compared again in constant time.
 */
export async function resolveSession(
  sql: Db,
  token: string,
): Promise<{ session: Session; account: Account; person: Account; role: Role | null } | null> {
  if (!token || token.length > 200) return null
  const hash = sha256(token)
  const [row] = await sql<
    { id: string; account_id: string; active: string; role: Role | null; csrf_token: string; expires_at: Date; token_hash: Buffer }[]
  >`
    select s.id, s.account_id, coalesce(s.active_account_id, s.account_id) as active, m.role, s.csrf_token, s.expires_at, s.token_hash
    from sessions s left join memberships m on m.account_id = coalesce(s.active_account_id, s.account_id) and m.person_id = s.account_id
    where s.token_hash = ${hash} and s.revoked_at is null and s.expires_at > now()`
  if (!row || !constantTimeEqual(row.token_hash, hash)) return null
  const person = await findAccountById(sql, row.account_id)
  const account = row.active === row.account_id ? person : await findAccountById(sql, row.active)
  if (!person || !account) return null
  return {
    session: { id: row.id, accountId: row.account_id, activeAccountId: row.active, csrfToken: row.csrf_token, expiresAt: row.expires_at },
    account,
    person,
    role: row.role,
  }
}

/** Points the session at another account of the person's; false when they are not a member of it. */
export async function switchSessionAccount(sql: Db, sessionId: string, personId: string, accountId: string): Promise<boolean> {
  const res = await sql`
    update sessions set active_account_id = ${accountId} where id = ${sessionId} and account_id = ${personId}
    and exists (select 1 from memberships where account_id = ${accountId} and person_id = ${personId})`
  return res.count === 1
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
