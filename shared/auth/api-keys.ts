// Account API keys: `mk_<prefix>_<secret>`, letters, digits and `_` only so
// that old clients that do not URL-encode their form bodies keep them intact.
// Only the prefix (for lookup and display) and a sha256 of the whole key are stored.
import type { Db } from '../db.js'
import type { KeyScope, Role } from '../members/roles.js'
import { constantTimeEqual, randomBase62, sha256 } from './secrets.js'

const PREFIX_LEN = 12 // ~71 bits: a unique lookup handle, not a secret
const SECRET_LEN = 32 // ~190 bits of randomness
const KEY_SHAPE = /^mk_([A-Za-z0-9]{12})_[A-Za-z0-9]{32}$/

export interface ApiKey {
  id: string
  accountId: string
  label: string
  prefix: string
  createdAt: Date
  lastUsedAt: Date | null
  /** What the key may do (docs/decisions.md §23). */
  scope: KeyScope
  /** The person who made it (null: since removed from the service). */
  createdBy: string | null
  createdByEmail?: string | null
  /** The creator's current role in the key's account (null: no longer a member); the key acts with at most it. */
  creatorRole?: Role | null
}

interface KeyRow {
  id: string
  account_id: string
  label: string
  prefix: string
  created_at: Date
  last_used_at: Date | null
  scope: KeyScope
  created_by: string | null
  created_by_email?: string | null
  creator_role?: Role | null
}

const toKey = (r: KeyRow): ApiKey => ({
  id: r.id,
  accountId: r.account_id,
  label: r.label,
  prefix: r.prefix,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  scope: r.scope,
  createdBy: r.created_by,
  createdByEmail: r.created_by_email,
  creatorRole: r.creator_role,
})

/** Creates a key; the secret is returned once and never stored. */
export async function createApiKey(
  sql: Db,
  accountId: string,
  label: string,
  scope: KeyScope = 'full',
  // Not given (the CLI, benchmarks): the account's own person, its first owner.
  createdBy?: string,
): Promise<{ apiKey: ApiKey; secret: string }> {
  const prefix = randomBase62(PREFIX_LEN)
  const secret = `mk_${prefix}_${randomBase62(SECRET_LEN)}`
  const [row] = await sql<KeyRow[]>`
    insert into api_keys (account_id, label, prefix, secret_hash, scope, created_by)
    values (${accountId}, ${label}, ${prefix}, ${sha256(secret)}, ${scope}, ${createdBy ?? accountId})
    returning id, account_id, label, prefix, created_at, last_used_at, scope, created_by`
  return { apiKey: toKey(row), secret }
}

/** The account's live keys, newest first. */
export async function listApiKeys(sql: Db, accountId: string): Promise<ApiKey[]> {
  const rows = await sql<KeyRow[]>`
    select k.id, k.account_id, k.label, k.prefix, k.created_at, k.last_used_at, k.scope, k.created_by, p.email as created_by_email
    from api_keys k left join accounts p on p.id = k.created_by
    where k.account_id = ${accountId} and k.revoked_at is null order by k.created_at desc, k.id`
  return rows.map(toKey)
}

/** Revokes one of the account's keys; false when there is no such live key. */
export async function revokeApiKey(sql: Db, accountId: string, keyId: string, createdBy?: string): Promise<ApiKey | null> {
  // A member revokes only the keys they made (createdBy given); owners and admins any of the account's.
  const [row] = await sql<KeyRow[]>`
    update api_keys set revoked_at = now() where id = ${keyId} and account_id = ${accountId} and revoked_at is null
    ${createdBy ? sql`and created_by = ${createdBy}` : sql``}
    returning id, account_id, label, prefix, created_at, last_used_at, scope, created_by`
  return row ? toKey(row) : null
}

/** Looks a presented key up by its prefix and checks the whole key in constant time. */
export async function findApiKey(sql: Db, presented: string): Promise<ApiKey | null> {
  const m = KEY_SHAPE.exec(presented)
  if (!m) return null
  const [row] = await sql<(KeyRow & { secret_hash: Buffer })[]>`
    select id, account_id, label, prefix, created_at, last_used_at, scope, created_by, secret_hash,
      (select m.role from memberships m where m.account_id = api_keys.account_id and m.person_id = api_keys.created_by) as creator_role
    from api_keys where prefix = ${m[1]} and revoked_at is null`
  if (!row || !constantTimeEqual(row.secret_hash, sha256(presented))) return null
  return toKey(row)
}

/**
 * The live keys with these prefixes, each with the sha256 of its whole key for the caller to compare in
 * constant time (the key resolver's background refresh: one query for every key a process is serving).
 */
export async function findLiveKeysByPrefix(sql: Db, prefixes: string[]): Promise<Array<ApiKey & { secretHash: Buffer }>> {
  if (!prefixes.length) return []
  const rows = await sql<(KeyRow & { secret_hash: Buffer })[]>`
    select id, account_id, label, prefix, created_at, last_used_at, scope, created_by, secret_hash,
      (select m.role from memberships m where m.account_id = api_keys.account_id and m.person_id = api_keys.created_by) as creator_role
    from api_keys where prefix = any(${prefixes}::text[]) and revoked_at is null`
  return rows.map((r) => ({ ...toKey(r), secretHash: r.secret_hash }))
}

/** The prefix of a key of the right shape (undefined otherwise: such a key is never found). */
export function keyPrefix(presented: string): string | undefined {
  return KEY_SHAPE.exec(presented)?.[1]
}

/** Records use of a key, at most once a minute per key so that hot writers do not write a row per request. */
export async function touchApiKey(sql: Db, keyId: string): Promise<void> {
  await sql`update api_keys set last_used_at = now() where id = ${keyId} and (last_used_at is null or last_used_at < now() - interval '1 minute')`
}

/** The public JSON form of a key (never the secret). */
export function apiKeyJson(k: ApiKey) {
  return {
    id: k.id,
    label: k.label,
    prefix: `mk_${k.prefix}`,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    scope: k.scope,
    created_by: k.createdBy ? { id: k.createdBy, email: k.createdByEmail ?? null } : null,
  }
}
