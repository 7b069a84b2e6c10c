// Idempotency keys and replay detection on the request path (interface 4.1.4,
// DESIGN.md decision 4). Redis answers fast; the persist worker's durable
// record in point_ikeys makes sure a duplicate is never stored even when Redis forgot.
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import type { Db } from '../db.js'
import { redisKey } from '../redis.js'

const IKEY_TTL_SECONDS = 7 * 86_400
const SEEN_TTL_SECONDS = 3_600

export interface IkeyClaim {
  statId: string
  t: number
  ikey: string
}

export class Idempotency {
  constructor(private readonly redis: Redis, private readonly config: Pick<Config, 'redisPrefix'>) {}

  private key(c: IkeyClaim): string {
    return redisKey(this.config, 'ikey', c.statId, String(c.t), c.ikey)
  }

  /** Claims each key; true where this is the first write (first write wins). */
  async claim(claims: IkeyClaim[]): Promise<boolean[]> {
    if (!claims.length) return []
    const pipe = this.redis.pipeline()
    for (const c of claims) pipe.set(this.key(c), '1', 'EX', IKEY_TTL_SECONDS, 'NX')
    const results = (await pipe.exec()) ?? []
    return results.map(([err, res]) => {
      if (err) throw err
      return res === 'OK'
    })
  }

  /** Frees keys claimed by writes that were then refused, so a retry is not mistaken for a duplicate. */
  async release(claims: IkeyClaim[]): Promise<void> {
    if (claims.length) await this.redis.del(...claims.map((c) => this.key(c)))
  }

  /**
   * Whether the stat already holds a point at exactly this second (best effort,
   * for the `replay` disclosure): recent writes are remembered in Redis, older
   * ones are found in PostgreSQL.
   */
  async seenBefore(sql: Db, statId: string, t: number): Promise<boolean> {
    const fresh = await this.redis.set(redisKey(this.config, 'seen', statId, String(t)), '1', 'EX', SEEN_TTL_SECONDS, 'NX')
    if (fresh !== 'OK') return true
    const [row] = await sql<{ found: boolean }[]>`select exists (select 1 from points where stat_id = ${statId} and ts = to_timestamp(${t})) as found`
    return row.found
  }
}
