// Invitations to an account (docs/decisions.md §23): a mailed link valid 7 days, used once, bound to the
// invited address (a forwarded link does not work for anyone else), its token kept as a sha256 only.
// Throttled like the alerts' confirmation mails: an address gets invitations from at most 3 accounts a
// day, an account sends at most 10 a day.
import type { Config } from '../config.js'
import type { Db, Sql } from '../db.js'
import { AppError, conflict, forbidden, invalid, notFound } from '../errors.js'
import { CONFIRMATIONS_PER_ACCOUNT, CONFIRMATIONS_PER_ADDRESS, sendMail } from '../alerts/mail.js'
import { randomToken, sha256 } from '../auth/secrets.js'
import type { Role } from './roles.js'

export const INVITATION_VALID_DAYS = 7

export interface Invitation {
  id: string
  email: string
  role: Role
  expiresAt: Date
}

type Row = { id: string; email: string; role: Role; expires_at: Date }
const toInvitation = (r: Row): Invitation => ({ id: r.id, email: r.email, role: r.role, expiresAt: r.expires_at })

export function invitationJson(i: Invitation) {
  return { id: i.id, email: i.email, role: i.role, expires_at: i.expiresAt.toISOString() }
}

function throttled(message: string): AppError {
  const err = new AppError('rate_limited', 'invitation_mail_throttled', message)
  err.retryAfter = 3600
  return err
}

/**
 * Creates an invitation and returns it with its token (for the mail only). The answer is the same whether
 * the address has a login or not; an address already a member is a 409 (the caller can see its members).
 * A new invitation to the same address revokes the account's earlier ones (one live link per address).
 */
export async function createInvitation(
  sql: Sql,
  accountId: string,
  invitedBy: string,
  email: string,
  role: Role,
): Promise<{ invitation: Invitation; token: string }> {
  const address = email.trim().toLowerCase()
  return (await sql.begin(async (tx) => {
    // Same lock order as the confirmation mails: account, then address.
    await tx`select pg_advisory_xact_lock(hashtextextended(${accountId}, 36))`
    await tx`select pg_advisory_xact_lock(hashtextextended(${address}, 36))`
    const [member] = await tx`
      select 1 from memberships m join accounts p on p.id = m.person_id where m.account_id = ${accountId} and lower(p.email) = ${address}`
    if (member) throw conflict('already_member', 'this address is already a member of the account; nothing was sent')
    const [counts] = await tx<{ address: number; account: number }[]>`
      select (select count(distinct account_id) from invitations where email = ${address} and created_at > now() - interval '1 day'
                and account_id <> ${accountId})::int as address,
             (select count(*) from invitations where account_id = ${accountId} and created_at > now() - interval '1 day')::int as account`
    if (counts.address >= CONFIRMATIONS_PER_ADDRESS)
      throw throttled(`too many invitations to ${address} today; nothing was stored, try again tomorrow`)
    if (counts.account >= CONFIRMATIONS_PER_ACCOUNT)
      throw throttled(
        `this account has sent its ${CONFIRMATIONS_PER_ACCOUNT} invitations for today; nothing was stored, try again tomorrow`,
      )
    await tx`update invitations set revoked_at = now()
             where account_id = ${accountId} and email = ${address} and accepted_at is null and revoked_at is null`
    const token = randomToken(32)
    const [row] = await tx<Row[]>`
      insert into invitations (account_id, email, role, token_hash, invited_by, expires_at)
      values (${accountId}, ${address}, ${role}, ${sha256(token)}, ${invitedBy}, now() + make_interval(days => ${INVITATION_VALID_DAYS}))
      returning id, email, role, expires_at`
    return { invitation: toInvitation(row), token }
  })) as { invitation: Invitation; token: string }
}

/** Mails the invitation's link (the app's accept page on PUBLIC_URL). */
export async function mailInvitation(config: Config, baseUrl: string, inviterEmail: string, email: string, token: string): Promise<void> {
  const link = `${baseUrl}/invitation?token=${token}`
  await sendMail(config, {
    to: email,
    subject: 'You are invited to a Metrics account',
    text:
      `${inviterEmail} invites you to their Metrics account.\n\nAccept with this link, valid ${INVITATION_VALID_DAYS} days and once ` +
      `(sign in, or sign up with this address, first):\n${link}\n\nIf you did not expect it, ignore this mail.`,
    link,
  })
}

export async function listInvitations(sql: Db, accountId: string): Promise<Invitation[]> {
  const rows = await sql<Row[]>`
    select id, email, role, expires_at from invitations
    where account_id = ${accountId} and accepted_at is null and revoked_at is null and expires_at > now() order by created_at desc`
  return rows.map(toInvitation)
}

export async function revokeInvitation(sql: Db, accountId: string, id: string): Promise<Invitation> {
  const [row] = await sql<Row[]>`
    update invitations set revoked_at = now()
    where id = ${id} and account_id = ${accountId} and accepted_at is null and revoked_at is null returning id, email, role, expires_at`
  if (!row) throw notFound('invitation')
  return toInvitation(row)
}

const refused = () => invalid('invalid_invitation', 'this invitation is unknown, expired, revoked or already used; nothing was changed')

/**
 * Accepts an invitation for the signed-in person: the token must be live and the person's e-mail the invited
 * one. Used up and the membership made in one transaction (a second use finds it used). The account is the
 * token row's, never anything the request names.
 */
export async function acceptInvitation(sql: Sql, token: string, person: { id: string; email: string }) {
  return (await sql.begin(async (tx) => {
    const [inv] = await tx<{ id: string; account_id: string; email: string; role: Role }[]>`
      select id, account_id, email, role from invitations
      where token_hash = ${sha256(token)} and accepted_at is null and revoked_at is null and expires_at > now() for update`
    if (!inv) throw refused()
    if (inv.email !== person.email.toLowerCase())
      throw forbidden('invitation_email_mismatch', 'this invitation was sent to another address: sign in with that address to accept it')
    await tx`update invitations set accepted_at = now() where id = ${inv.id}`
    const added = await tx`
      insert into memberships (account_id, person_id, role) values (${inv.account_id}, ${person.id}, ${inv.role}) on conflict do nothing`
    if (added.count !== 1) throw conflict('already_member', 'you are already a member of this account')
    return { accountId: inv.account_id, role: inv.role, invitationId: inv.id }
  })) as { accountId: string; role: Role; invitationId: string }
}

/** Deletes invitations ended more than a day ago (the maintenance schedule). */
export async function purgeInvitations(sql: Db, now: Date): Promise<number> {
  const res = await sql`delete from invitations where expires_at < ${now} - interval '1 day'`
  return res.count
}
