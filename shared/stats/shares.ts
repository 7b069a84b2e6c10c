// Share tokens: a per-stat read credential for the embed routes. Random,
// stored hashed, compared in constant time; revoking deletes the row, so a
// revoked token stops working at once (there is no cache).
import type { Db } from '../db.js'
import { constantTimeEqual, randomToken, sha256 } from '../auth/secrets.js'

/** Creates or rotates the stat's token; returns the token (shown once) and when it was made. */
export async function createShare(sql: Db, statId: string): Promise<{ token: string; createdAt: Date }> {
  const token = randomToken(24)
  const [row] = await sql<{ created_at: Date }[]>`
    insert into stat_shares (stat_id, token_hash) values (${statId}, ${sha256(token)})
    on conflict (stat_id) do update set token_hash = excluded.token_hash, created_at = now()
    returning created_at`
  return { token, createdAt: row.created_at }
}

/** Revokes the stat's token; false when it had none. */
export async function revokeShare(sql: Db, statId: string): Promise<boolean> {
  const res = await sql`delete from stat_shares where stat_id = ${statId}`
  return res.count > 0
}

/** Whether `token` is the stat's live share token. */
export async function shareAllows(sql: Db, statId: string, token: string): Promise<boolean> {
  if (!token || token.length > 200) return false
  const [row] = await sql<{ token_hash: Buffer }[]>`select token_hash from stat_shares where stat_id = ${statId}`
  return Boolean(row) && constantTimeEqual(row.token_hash, sha256(token))
}

/** When the stat's live share token was made, or null when the stat is not shared (the token itself is never read back). */
export async function shareSince(sql: Db, statId: string): Promise<Date | null> {
  const [row] = await sql<{ created_at: Date }[]>`select created_at from stat_shares where stat_id = ${statId}`
  return row?.created_at ?? null
}
