// Resolves a presented API key to its account, with a short in-process cache.
// The cache lives at most CACHE_MS so that a key revoked through any API
// process stops working everywhere within a second, with no invalidation
// channel that could be missed; the process that revokes evicts at once.
import type { Db } from '../db.js'
import { findAccountById, type Account } from '../accounts/repo.js'
import { InFlight } from '../in-flight.js'
import { findApiKey, touchApiKey } from './api-keys.js'
import { sha256 } from './secrets.js'

const CACHE_MS = 500
const MAX_ENTRIES = 10_000

export interface ResolvedKey {
  keyId: string
  account: Account
}

export class KeyResolver {
  private readonly cache = new Map<string, { value: ResolvedKey | null; until: number }>()
  private readonly loading = new InFlight<string, ResolvedKey | null>()
  private readonly touched = new Map<string, number>()

  constructor(private readonly sql: Db, private readonly now: () => number = Date.now) {}

  /** The key's account, or null for an unknown, malformed or revoked key. */
  async resolve(presented: string): Promise<ResolvedKey | null> {
    const id = sha256(presented).toString('base64')
    const hit = this.cache.get(id)
    if (hit && hit.until > this.now()) return hit.value
    return this.loading.run(id, () => this.load(id, presented))
  }

  private async load(id: string, presented: string): Promise<ResolvedKey | null> {
    const key = await findApiKey(this.sql, presented)
    const account = key ? await findAccountById(this.sql, key.accountId) : null
    const value = key && account ? { keyId: key.id, account } : null
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear()
    this.cache.set(id, { value, until: this.now() + CACHE_MS })
    // last_used_at is informational: written at most once a minute per key from each process.
    if (key && (this.touched.get(key.id) ?? 0) < this.now() - 60_000) {
      if (this.touched.size >= MAX_ENTRIES) this.touched.clear()
      this.touched.set(key.id, this.now())
      void touchApiKey(this.sql, key.id).catch(() => {})
    }
    return value
  }

  /** Drops every cached entry of a key id (called by the process that revoked it). */
  evict(keyId: string): void {
    for (const [id, entry] of this.cache) if (entry.value?.keyId === keyId) this.cache.delete(id)
  }
}

/**
 * Picks the account key from a legacy request's fields: `ezkey` on /ez,
 * `ukey` on /c and /v, and `email` as an alias on all three.
 */
export function legacyKeyField(fields: Record<string, unknown>, primary: 'ezkey' | 'ukey'): string | undefined {
  const v = fields[primary] ?? fields.email
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined
}
