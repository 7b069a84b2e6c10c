// Account rows. Every other table is scoped by account_id.
import type { Db } from '../db.js'
import type { PlanName } from '../plans.js'

export interface Account {
  id: string
  email: string
  plan: PlanName
  createdAt: Date
  /** IANA zone chosen for the account; null: each browser's own. */
  timeZone: string | null
}

interface AccountRow {
  id: string
  email: string
  plan: PlanName
  created_at: Date
  time_zone: string | null
  password_hash: string | null
}

const toAccount = (r: AccountRow): Account => ({ id: r.id, email: r.email, plan: r.plan, createdAt: r.created_at, timeZone: r.time_zone })

/**
 * Inserts a person and their first account (one row: sql/0036_teams.sql), its owner in the same statement;
 * returns null when the e-mail is taken (in any letter case).
 */
export async function insertAccount(sql: Db, email: string, passwordHash: string | null, plan: PlanName = 'free'): Promise<Account | null> {
  const rows = await sql<AccountRow[]>`
    with a as (
      insert into accounts (email, password_hash, plan) values (${email}, ${passwordHash}, ${plan})
      on conflict ((lower(email))) do nothing
      returning id, email, plan, created_at, time_zone, password_hash
    ), m as (insert into memberships (account_id, person_id, role) select id, id, 'owner' from a)
    select * from a`
  return rows.length ? toAccount(rows[0]) : null
}

/** Finds an account and its password hash by e-mail, whatever the case. */
export async function findAccountByEmail(sql: Db, email: string): Promise<{ account: Account; passwordHash: string | null } | null> {
  const [row] = await sql<
    AccountRow[]
  >`select id, email, plan, created_at, time_zone, password_hash from accounts where lower(email) = lower(${email})`
  return row ? { account: toAccount(row), passwordHash: row.password_hash } : null
}

export async function findAccountById(sql: Db, id: string): Promise<Account | null> {
  const [row] = await sql<AccountRow[]>`select id, email, plan, created_at, time_zone, password_hash from accounts where id = ${id}`
  return row ? toAccount(row) : null
}

/** Several accounts by id (the key resolver's background refresh). */
export async function findAccountsByIds(sql: Db, ids: string[]): Promise<Account[]> {
  if (!ids.length) return []
  const rows = await sql<
    AccountRow[]
  >`select id, email, plan, created_at, time_zone, password_hash from accounts where id = any(${ids}::uuid[])`
  return rows.map(toAccount)
}

export async function setAccountPlan(sql: Db, id: string, plan: PlanName): Promise<Account | null> {
  const [row] = await sql<
    AccountRow[]
  >`update accounts set plan = ${plan} where id = ${id} returning id, email, plan, created_at, time_zone, password_hash`
  return row ? toAccount(row) : null
}

export async function listAccounts(sql: Db): Promise<Account[]> {
  const rows = await sql<AccountRow[]>`select id, email, plan, created_at, time_zone, password_hash from accounts order by created_at`
  return rows.map(toAccount)
}

/** Sets (or, with null, clears) the account's time zone; the name is checked by the caller's schema. */
export async function setAccountTimeZone(sql: Db, id: string, timeZone: string | null): Promise<Account | null> {
  const [row] = await sql<
    AccountRow[]
  >`update accounts set time_zone = ${timeZone} where id = ${id} returning id, email, plan, created_at, time_zone, password_hash`
  return row ? toAccount(row) : null
}

/**
 * Gives a free account one of the limited free-tier slots, claimed by its
 * first accepted point; true when it holds one (already or now). The
 * free_tier row lock serialises claims, so the last slot goes to one account.
 */
export async function claimFreeSlot(sql: import('../db.js').Sql, accountId: string, slots: number): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [acc] = await tx<
      { claimed: Date | null }[]
    >`select free_slot_claimed_at as claimed from accounts where id = ${accountId} for update`
    if (!acc) return false
    if (acc.claimed) return true
    const [slot] = await tx`update free_tier set claimed = claimed + 1 where claimed < ${slots} returning claimed`
    if (!slot) return false
    await tx`update accounts set free_slot_claimed_at = now() where id = ${accountId}`
    return true
  }) as Promise<boolean>
}
