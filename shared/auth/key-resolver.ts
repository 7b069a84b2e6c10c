// Resolves a presented API key to its account, with an in-process cache.
// An entry is served for at most MAX_AGE_MS since it was read from the
// database, so that a key revoked through any API process (or an account whose
// plan changed) is seen everywhere within a second, with no invalidation
// channel that could be missed; the process that revokes evicts at once.
//
// Keys in use are re-read in the background (every REFRESH_MS, one query for
// all of them), so that a busy writer never waits on PostgreSQL: only a key's
// first request, or one after the refresh fell behind, reads it in line.
import { hash } from 'node:crypto'
import type { Db } from '../db.js'
import { findAccountById, findAccountsByIds, type Account } from '../accounts/repo.js'
import type { KeyScope, Role } from '../members/roles.js'
import { InFlight } from '../in-flight.js'
import { findApiKey, findLiveKeysByPrefix, keyPrefix, touchApiKey } from './api-keys.js'
import { constantTimeEqual } from './secrets.js'

/** The oldest a served entry may be: a revocation takes effect everywhere within this. */
const MAX_AGE_MS = 1000
/** How often keys in use are re-read; well inside MAX_AGE_MS, so that a refresh a little late still serves from memory. */
const REFRESH_MS = 400
/** A key not presented for this long is no longer refreshed, and forgotten. */
const IDLE_MS = 10_000
/** Unknown keys are remembered this long (no refresh: they are not worth a query each). */
const NEGATIVE_MS = 500
const MAX_ENTRIES = 10_000

export interface ResolvedKey {
  keyId: string
  account: Account
  scope: KeyScope
  /**
   * Its creator's role in the account now (null: removed), re-read with the key (within a second): a key acts
   * with at most that role, so a member's key cannot do what the member cannot, and a removed member's keys stop.
   */
  role: Role | null
}

interface Entry {
  value: ResolvedKey | null
  loadedAt: number
  usedAt: number
  /** What the refresh needs to find and check the key again without holding the key itself. */
  prefix?: string
  hash?: Buffer
}

export class KeyResolver {
  private readonly cache = new Map<string, Entry>()
  private readonly loading = new InFlight<string, ResolvedKey | null>()
  private readonly touched = new Map<string, number>()
  /** Bumped by every eviction: a refresh that started before one does not write back what it read. */
  private evictions = 0
  private refreshing = false
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly sql: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS)
    this.timer.unref()
  }

  /** The key's account, or null for an unknown, malformed or revoked key. */
  resolve(presented: string): Promise<ResolvedKey | null> {
    // The one-shot form: createHash().update().digest() allocated three objects on every write.
    const id = hash('sha256', presented, 'base64')
    const known = this.fresh(id)
    if (known !== undefined) return Promise.resolve(known)
    return this.loading.run(id, () => this.load(id, presented, Buffer.from(id, 'base64')))
  }

  /**
   * What resolve() answers when this process holds a fresh entry for the key, without a promise (a busy writer's
   * key, nearly always); undefined when resolve() must read it.
   */
  cached(presented: string): ResolvedKey | null | undefined {
    return this.fresh(hash('sha256', presented, 'base64'))
  }

  private fresh(id: string): ResolvedKey | null | undefined {
    const hit = this.cache.get(id)
    if (!hit) return undefined
    const now = this.now()
    if (now - hit.loadedAt >= (hit.value ? MAX_AGE_MS : NEGATIVE_MS)) return undefined
    hit.usedAt = now
    return hit.value
  }

  private async load(id: string, presented: string, secretHash: Buffer): Promise<ResolvedKey | null> {
    const evictions = this.evictions
    const loadedAt = this.now()
    const key = await findApiKey(this.sql, presented)
    const account = key ? await findAccountById(this.sql, key.accountId) : null
    const value = key && account ? { keyId: key.id, account, scope: key.scope, role: key.creatorRole ?? null } : null
    if (evictions === this.evictions) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear()
      this.cache.set(id, { value, loadedAt, usedAt: loadedAt, prefix: keyPrefix(presented), hash: secretHash })
    }
    if (key) this.touch(key.id)
    return value
  }

  // last_used_at is informational: written at most once a minute per key from each process.
  private touch(keyId: string): void {
    if ((this.touched.get(keyId) ?? 0) >= this.now() - 60_000) return
    if (this.touched.size >= MAX_ENTRIES) this.touched.clear()
    this.touched.set(keyId, this.now())
    void touchApiKey(this.sql, keyId).catch(() => {})
  }

  /**
   * Re-reads every key presented lately, in two queries for all of them. A key found revoked (or
   * its account gone) is dropped, so its next request reads it in line and is refused.
   */
  private async refresh(): Promise<void> {
    if (this.refreshing) return
    const now = this.now()
    const live: Array<[string, Entry]> = []
    for (const [id, e] of this.cache) {
      if (now - e.usedAt > IDLE_MS || (!e.value && now - e.loadedAt >= NEGATIVE_MS)) this.cache.delete(id)
      else if (e.value && e.prefix && e.hash) live.push([id, e])
    }
    if (!live.length) return
    this.refreshing = true
    const evictions = this.evictions
    try {
      const keys = await findLiveKeysByPrefix(this.sql, [...new Set(live.map(([, e]) => e.prefix!))])
      const accounts = new Map((await findAccountsByIds(this.sql, [...new Set(keys.map((k) => k.accountId))])).map((a) => [a.id, a]))
      if (evictions !== this.evictions) return // a revocation here meanwhile: what was read may predate it
      for (const [id, e] of live) {
        if (this.cache.get(id) !== e) continue // replaced by a load meanwhile
        const key = keys.find((k) => k.prefix === e.prefix && constantTimeEqual(k.secretHash, e.hash!))
        const account = key && accounts.get(key.accountId)
        if (!key || !account) this.cache.delete(id)
        else {
          e.value = { keyId: key.id, account, scope: key.scope, role: key.creatorRole ?? null }
          e.loadedAt = now
          this.touch(key.id)
        }
      }
    } catch {
      // PostgreSQL away: entries age out and requests read in line (and are answered 503 while it is down).
    } finally {
      this.refreshing = false
    }
  }

  /** Drops every cached entry of a key id (called by the process that revoked it). */
  evict(keyId: string): void {
    this.evictions++
    for (const [id, entry] of this.cache) if (entry.value?.keyId === keyId) this.cache.delete(id)
  }

  /** Stops the background refresh (graceful shutdown). */
  close(): void {
    clearInterval(this.timer)
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
