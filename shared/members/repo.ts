// Memberships: which person belongs to which account, with what role (docs/decisions.md §23).
// A person is the accounts row they signed up with (sql/0036_teams.sql says why).
import type { Db, Sql } from '../db.js'
import { conflict, notFound } from '../errors.js'
import type { Role } from './roles.js'

export interface Member {
  id: string
  email: string
  role: Role
  joinedAt: Date
  lastSignInAt: Date | null
}

/** The person's role in an account, read on every request (no cache: a removal counts at once). */
export async function roleOf(sql: Db, accountId: string, personId: string): Promise<Role | null> {
  const [row] = await sql<{ role: Role }[]>`select role from memberships where account_id = ${accountId} and person_id = ${personId}`
  return row?.role ?? null
}

export async function addMember(sql: Db, accountId: string, personId: string, role: Role): Promise<boolean> {
  const res =
    await sql`insert into memberships (account_id, person_id, role) values (${accountId}, ${personId}, ${role}) on conflict do nothing`
  return res.count === 1
}

export async function listMembers(sql: Db, accountId: string): Promise<Member[]> {
  const rows = await sql<{ id: string; email: string; role: Role; created_at: Date; last_sign_in_at: Date | null }[]>`
    select p.id, p.email, m.role, m.created_at, p.last_sign_in_at from memberships m join accounts p on p.id = m.person_id
    where m.account_id = ${accountId} order by m.created_at, p.email`
  return rows.map((r) => ({ id: r.id, email: r.email, role: r.role, joinedAt: r.created_at, lastSignInAt: r.last_sign_in_at }))
}

/** The accounts a person belongs to, with the role in each (their own first). */
export async function accountsOfPerson(sql: Db, personId: string) {
  return sql<{ id: string; email: string; plan: string; role: Role }[]>`
    select a.id, a.email, a.plan, m.role from memberships m join accounts a on a.id = m.account_id
    where m.person_id = ${personId} order by (a.id = ${personId}) desc, m.created_at, a.id`
}

const lastOwner = () => conflict('last_owner', 'the account must keep an owner: transfer ownership first (POST /api/v1/account/transfer)')

/**
 * Changes a member's role; the owners row lock serialises two demotions racing for the last owner.
 * Returns the role before, or throws not_found / last_owner.
 */
export async function setMemberRole(sql: Sql, accountId: string, personId: string, role: Role): Promise<Role> {
  return (await sql.begin(async (tx) => {
    const owners = await tx<{ person_id: string; role: Role }[]>`
      select person_id, role from memberships where account_id = ${accountId} and role = 'owner' for update`
    const [m] = await tx<
      { role: Role }[]
    >`select role from memberships where account_id = ${accountId} and person_id = ${personId} for update`
    if (!m) throw notFound('member')
    if (m.role === 'owner' && role !== 'owner' && owners.length <= 1) throw lastOwner()
    await tx`update memberships set role = ${role} where account_id = ${accountId} and person_id = ${personId}`
    return m.role
  })) as Role
}

/** Removes a member (or the caller leaving); the last owner stays. Returns the removed role. */
export async function removeMember(sql: Sql, accountId: string, personId: string): Promise<Role> {
  return (await sql.begin(async (tx) => {
    const owners = await tx`select person_id from memberships where account_id = ${accountId} and role = 'owner' for update`
    const [m] = await tx<
      { role: Role }[]
    >`delete from memberships where account_id = ${accountId} and person_id = ${personId} returning role`
    if (!m) throw notFound('member')
    if (m.role === 'owner' && owners.length <= 1) throw lastOwner()
    return m.role
  })) as Role
}

/** Hands ownership to another member: they become owner, the caller admin. */
export async function transferOwnership(sql: Sql, accountId: string, fromPerson: string, toPerson: string): Promise<void> {
  await sql.begin(async (tx) => {
    const [to] = await tx`select 1 from memberships where account_id = ${accountId} and person_id = ${toPerson} for update`
    if (!to) throw notFound('member')
    await tx`update memberships set role = 'owner' where account_id = ${accountId} and person_id = ${toPerson}`
    if (fromPerson !== toPerson)
      await tx`update memberships set role = 'admin' where account_id = ${accountId} and person_id = ${fromPerson}`
  })
}
