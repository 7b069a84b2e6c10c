// Idempotency keys and replay detection on the request path (docs/decisions.md §I-4.1.4,
// docs/decisions.md §D-4). Redis answers fast; the persist worker's durable
// record in point_ikeys makes sure a duplicate is never stored even when Redis forgot.
//
// An ikey in Redis means "queued": it is written only once the point's job is,
// so that a failure between the two (Redis going away) leaves nothing claimed
// and the client's retry is stored rather than answered `duplicate_ignored`.
// Two writes of the same key racing inside that window are both queued; the
// worker's point_ikeys keeps the first and drops the other.
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
  constructor(
    private readonly redis: Redis,
    private readonly config: Pick<Config, 'redisPrefix'>,
  ) {}

  private key(c: IkeyClaim): string {
    return redisKey(this.config, 'ikey', c.statId, String(c.t), c.ikey)
  }

  private seenKey(statId: string, t: number): string {
    return redisKey(this.config, 'seen', statId, String(t))
  }

  /**
   * Which keys are new: not queued before, and not repeated earlier in `claims`
   * (within one write the first point of a key wins). Records nothing.
   */
  async fresh(claims: IkeyClaim[]): Promise<boolean[]> {
    if (!claims.length) return []
    // One command per key, not a pipeline: the keys of a batch live on many nodes of a Redis Cluster, and the
    // client's auto-pipelining sends commands of the same tick in one write per node anyway.
    const results = await Promise.all(claims.map((c) => this.redis.exists(this.key(c))))
    const inWrite = new Set<string>()
    return results.map((res, i) => {
      const key = this.key(claims[i])
      if (res !== 0 || inWrite.has(key)) return false
      inWrite.add(key)
      return true
    })
  }

  /**
   * Records keys (and the seconds written, for the replay disclosure) once their points are queued.
   * The points are safe in the queue by then, so a failure here is only forgotten deduplication,
   * which point_ikeys still provides: the caller logs it and answers success.
   */
  async record(claims: IkeyClaim[], seen: Array<{ statId: string; t: number }>): Promise<void> {
    if (!claims.length && !seen.length) return
    await Promise.all([
      ...claims.map((c) => this.redis.set(this.key(c), '1', 'EX', IKEY_TTL_SECONDS)),
      ...seen.map((s) => this.redis.set(this.seenKey(s.statId, s.t), '1', 'EX', SEEN_TTL_SECONDS)),
    ])
  }

  /**
   * Whether the stat already holds a point at exactly this second (best effort,
   * for the `replay` disclosure): recent writes are remembered in Redis (see
   * record), older ones are found in PostgreSQL.
   */
  async seenBefore(sql: Db, statId: string, t: number): Promise<boolean> {
    if (await this.redis.exists(this.seenKey(statId, t))) return true
    const [row] = await sql<
      { found: boolean }[]
    >`select exists (select 1 from stat_points(${statId}, to_timestamp(${t}), to_timestamp(${t} + 1)) where ts = to_timestamp(${t})) as found`
    return row.found
  }
}
