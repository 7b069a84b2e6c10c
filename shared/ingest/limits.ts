// Per-account limits kept in Redis, so that every API process shares one
// budget: the request rate (token bucket) and the daily point allowance
// (reset at 00:00 UTC). Each check is one atomic Lua script.
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import type { Plan } from '../plans.js'
import { redisKey } from '../redis.js'

// KEYS[1] bucket; ARGV: rate per second, burst, now (ms). Returns {allowed, remaining, ms until full}.
const TOKEN_BUCKET = `
local rate, burst, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens, ts = tonumber(state[1]), tonumber(state[2])
if tokens == nil then tokens, ts = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 't', tokens, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, math.floor(tokens), math.ceil((burst - tokens) / rate * 1000)}`

// KEYS[1] day counter; ARGV: wanted, limit, all-or-nothing (1/0), ttl seconds. Returns the number granted.
const RESERVE = `
local wanted, limit, whole = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local grant = math.max(0, math.min(wanted, limit - used))
if whole and grant < wanted then grant = 0 end
if grant > 0 then
  redis.call('INCRBY', KEYS[1], grant)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
end
return grant`

type LimitsRedis = Redis & {
  tokenBucket(key: string, rate: number, burst: number, now: number): Promise<[number, number, number]>
  reservePoints(key: string, wanted: number, limit: number, whole: string, ttl: number): Promise<number>
}

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  resetSeconds: number
}

export class Limits {
  private readonly redis: LimitsRedis

  constructor(redis: Redis, private readonly config: Pick<Config, 'redisPrefix'>, private readonly now: () => number = Date.now) {
    redis.defineCommand('tokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET })
    redis.defineCommand('reservePoints', { numberOfKeys: 1, lua: RESERVE })
    this.redis = redis as LimitsRedis
  }

  /** Takes one request from the account's bucket. */
  async takeRequest(accountId: string, plan: Plan): Promise<RateDecision> {
    const [allowed, remaining, msToFull] = await this.redis.tokenBucket(redisKey(this.config, 'rate', accountId), plan.requestsPerSecond, plan.burst, this.now())
    return { allowed: allowed === 1, limit: plan.burst, remaining, resetSeconds: Math.ceil(msToFull / 1000) }
  }

  private dayKey(accountId: string): string {
    return redisKey(this.config, 'points', accountId, new Date(this.now()).toISOString().slice(0, 10))
  }

  /**
   * Reserves `wanted` points of today's allowance; returns how many were
   * granted (all or none when `whole`, else as many as fit, in order).
   */
  async reservePoints(accountId: string, plan: Plan, wanted: number, whole: boolean): Promise<number> {
    return this.redis.reservePoints(this.dayKey(accountId), wanted, plan.pointsPerDay, whole ? '1' : '0', 2 * 86_400)
  }

  /** Gives back points reserved for writes that were not accepted after all. */
  async refundPoints(accountId: string, n: number): Promise<void> {
    if (n > 0) await this.redis.decrby(this.dayKey(accountId), n)
  }
}
