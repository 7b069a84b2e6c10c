// Per-account limits kept in Redis, so that every API process shares one
// budget: the request rate (token bucket) and the daily point allowance
// (reset at 00:00 UTC). Each trip to Redis is one atomic Lua script.
//
// A busy account would cost two Redis round trips per request, so a process
// that sees steady demand from an account (40 requests or single points a
// second or more) takes a little more than it needs, about half a second of
// that demand, and spends it locally for at most half a second (a lease).
// A lease spent to its last quarter, or in the last quarter of its life, is
// renewed in the background while still spent from: the next one joins it
// (request tokens still held count toward it; held tokens that cover the
// demand only have their half second start again), and a request or point
// that finds the lease spent meanwhile waits for the renewal and takes from it.
// An account below that rate never gets a lease: every one of its requests is
// decided in Redis, exactly. Leased request tokens that go unused are
// dropped; leased points that go unused are given back to the day's counter
// when the lease ends (a process killed outright loses at most one lease's
// worth). A lease never grants more than 1% of what is left of the day, so
// close to the daily limit there are none and the last points of the
// allowance are decided one by one across all processes.
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import type { Plan } from '../plans.js'
import { redisKey } from '../redis.js'

// KEYS[1] bucket; ARGV: rate per second, burst, now (ms), tokens wanted.
// Grants as many of the wanted tokens as the bucket holds. Returns {granted, remaining, ms until full}.
const TOKEN_BUCKET = `
local rate, burst, now, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens, ts = tonumber(state[1]), tonumber(state[2])
if tokens == nil then tokens, ts = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local granted = math.max(0, math.min(want, math.floor(tokens)))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 't', tokens, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {granted, math.floor(tokens), math.ceil((burst - tokens) / rate * 1000)}`

// KEYS[1] day counter; ARGV: wanted, limit, all-or-nothing (1/0), ttl seconds, extra wanted as a lease.
// Returns {granted, leased}: a lease only with a whole grant, and never more than 1% of what is left of the day.
const RESERVE = `
local wanted, limit, whole, extra = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1', tonumber(ARGV[5])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local grant = math.max(0, math.min(wanted, limit - used))
if whole and grant < wanted then grant = 0 end
local leased = 0
if grant == wanted then leased = math.max(0, math.min(extra, math.floor((limit - used - grant) / 100))) end
if grant + leased > 0 then
  redis.call('INCRBY', KEYS[1], grant + leased)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
end
return {grant, leased}`

type LimitsRedis = Redis & {
  tokenBucket(key: string, rate: number, burst: number, now: number, want: number): Promise<[number, number, number]>
  reservePoints(key: string, wanted: number, limit: number, whole: string, ttl: number, extra: number): Promise<[number, number]>
}

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  resetSeconds: number
}

// Measured on the write bench: leases covering 50 ms of demand still left every third request waiting
// on Redis, and those waits, not the CPU, were what held single writes back under a closed-loop load.
/** How long a lease may be spent. */
export const LEASE_MS = 500
/**
 * A lease spent down to this share of what it was granted, or in this share of its life from its end, is renewed in the background while it is still spent from: a busy account's writes then find a lease when they come, instead of
 * waiting on Redis for the next (and, on the direct route, being handed to Koa): in bench:writes 5 to 8 % of single
 * writes found their lease spent or ending.
 */
const RENEW_AT = 4
/** How far ahead hasLeasedPoint looks: more than a turn of the event loop takes between its answer and the take. */
const SAME_TURN_MS = 20
// A lease covering 250 ms of demand was spent in about half its life, and every refill is a
// Redis round trip a request waits for; covering the whole life of a lease halves them.
/** A lease covers about this much of the account's recent demand on this process... */
const LEASE_COVERS_MS = 500
/** ...once that demand reaches this rate (requests, or single points, a second). */
const LEASE_FROM_PER_SECOND = 40
const DAY_TTL_SECONDS = 2 * 86_400

/** Units (requests or points) per second an account has asked this process for, over the last quarter to half second. */
class Demand {
  private slot = 0
  private current = 0
  private previous = 0

  note(n: number, now: number): void {
    const slot = Math.floor(now / 250)
    if (slot !== this.slot) {
      this.previous = slot === this.slot + 1 ? this.current : 0
      this.slot = slot
      this.current = 0
    }
    this.current += n
  }

  /** Requests that found the last lease request in flight and waited for it: the next lease covers as many. */
  waited = 0
  /**
   * A request arrived while another of the account's was still asking Redis. Concurrent requests are a
   * busy writer whatever its rate (on a loaded machine a few hundred writes a second spread over many
   * accounts stayed under the rate threshold, paid two round trips each, and so stayed slow); a light,
   * sequential user never overlaps and keeps being decided in Redis exactly.
   */
  concurrent = false

  /** The extra to take on top of what is needed now: about LEASE_COVERS_MS of demand, none for a light user. */
  lease(now: number, cap: number): number {
    const perSecond = ((this.previous + this.current) * 1000) / (250 + (now % 250))
    const busy = perSecond >= LEASE_FROM_PER_SECOND || this.concurrent
    const n = Math.max(busy ? Math.floor((perSecond * LEASE_COVERS_MS) / 1000) : 0, this.waited)
    this.waited = 0
    this.concurrent = false
    return n >= 2 ? Math.min(n, Math.max(0, Math.floor(cap))) : 0
  }
}

interface AccountState {
  requests: Demand
  points: Demand
  /** Leased request tokens, spendable until tokensUntil. */
  tokens: number
  tokensUntil: number
  /** What the last lease of tokens, and of points, left to spend when it was granted: RENEW_AT is a share of it. */
  tokensLeased: number
  pointsLeased: number
  /** The plan the last point lease was granted under: its renewal asks under it. */
  plan?: Plan
  /**
   * A renewal ahead in flight, at most one of each kind per account. Writes spending the lease do not wait on it; a
   * request or point that finds the lease spent waits for it (takeRequest, reservePoints) rather than race it to Redis.
   */
  tokenRenewal?: Promise<void>
  pointRenewal?: Promise<void>
  /** What Redis reported with the last grant, for the RateLimit-* headers. */
  bucketRemaining: number
  msToFull: number
  tokenRefill?: Promise<boolean>
  /** Leased points of the day counter `pointsKey`, spendable until pointsUntil. */
  leasedPoints: number
  pointsUntil: number
  pointsKey: string
  pointRefill?: Promise<void>
  /** Single points being reserved in Redis right now without a lease. */
  pointAsks: number
  lastSeen: number
  /** The day counter's key for the UTC day `day` (days since the epoch): built once a day, not on every write. */
  day: number
  dayKey: string
}

export class Limits {
  private readonly redis: LimitsRedis
  private readonly accounts = new Map<string, AccountState>()
  /** Leased points to give back, by day counter, that Redis could not take yet. */
  private readonly owed = new Map<string, number>()
  private readonly sweeper: NodeJS.Timeout
  private sweeping: Promise<void> = Promise.resolve()
  /** Round trips to Redis so far (the tests read it). */
  redisCalls = 0

  constructor(
    redis: Redis,
    private readonly config: Pick<Config, 'redisPrefix'>,
    private readonly now: () => number = Date.now,
  ) {
    redis.defineCommand('tokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET })
    redis.defineCommand('reservePoints', { numberOfKeys: 1, lua: RESERVE })
    this.redis = redis as LimitsRedis
    this.sweeper = setInterval(() => {
      this.sweeping = this.sweeping.then(() => this.sweep()).catch(() => {})
    }, LEASE_MS).unref()
  }

  private state(accountId: string): AccountState {
    let s = this.accounts.get(accountId)
    if (!s) {
      s = {
        requests: new Demand(),
        points: new Demand(),
        tokens: 0,
        tokensUntil: 0,
        tokensLeased: 0,
        pointsLeased: 0,
        bucketRemaining: 0,
        msToFull: 0,
        leasedPoints: 0,
        pointsUntil: 0,
        pointsKey: '',
        pointAsks: 0,
        lastSeen: 0,
        day: -1,
        dayKey: '',
      }
      this.accounts.set(accountId, s)
    }
    s.lastSeen = this.now()
    return s
  }

  /**
   * One request from this process's lease of the account's bucket, when it holds one: decided in memory, no
   * promise. Undefined when takeRequest must decide (no lease, spent or over).
   */
  takeLeasedRequest(accountId: string, plan: Plan): RateDecision | undefined {
    const s = this.accounts.get(accountId)
    if (!s || s.tokens <= 0) return undefined
    const now = this.now()
    if (s.tokensUntil <= now) return undefined
    s.lastSeen = now
    s.requests.note(1, now)
    s.tokens--
    if (!s.tokenRenewal && !s.tokenRefill && (s.tokens * RENEW_AT < s.tokensLeased || (s.tokensUntil - now) * RENEW_AT < LEASE_MS))
      this.renewTokens(accountId, plan, s)
    return { allowed: true, limit: plan.burst, remaining: s.bucketRemaining + s.tokens, resetSeconds: Math.ceil(s.msToFull / 1000) }
  }

  /** Takes one request from the account's bucket. */
  async takeRequest(accountId: string, plan: Plan): Promise<RateDecision> {
    const leased = this.takeLeasedRequest(accountId, plan)
    if (leased) return leased
    const s = this.state(accountId)
    s.requests.note(1, this.now())
    const allowed = (): RateDecision => ({
      allowed: true,
      limit: plan.burst,
      remaining: s.bucketRemaining + s.tokens,
      resetSeconds: Math.ceil(s.msToFull / 1000),
    })
    const fromLease = () => {
      if (s.tokens <= 0 || s.tokensUntil <= this.now()) return undefined
      s.tokens--
      return allowed()
    }
    // The lease is spent and its renewal is taking the bucket's next tokens: asking the bucket beside it would find
    // them gone and be refused, and the renewal's tokens would then go unspent (a burst of 250 requests within a
    // burst allowance of 100 saw 97 allowed). Take from the renewal instead.
    if (s.tokenRenewal) {
      await s.tokenRenewal
      const renewed = fromLease()
      if (renewed) return renewed
    }
    // One lease request per account in flight; requests arriving meanwhile wait for it and take from what
    // it leased. Whoever finds nothing left asks Redis for its own token, without a lease, so that a
    // short lease never makes requests queue one behind another.
    if (s.tokenRefill) {
      s.requests.waited++
      s.requests.concurrent = true
      if (!(await s.tokenRefill)) return this.refused(plan, s)
      return fromLease() ?? ((await this.askTokens(accountId, plan, s, 1)) ? allowed() : this.refused(plan, s))
    }
    const refill = this.askTokens(accountId, plan, s, 1 + s.requests.lease(this.now(), plan.burst / 10))
    s.tokenRefill = refill.finally(() => (s.tokenRefill = undefined))
    return (await s.tokenRefill) ? allowed() : this.refused(plan, s)
  }

  private refused(plan: Plan, s: AccountState): RateDecision {
    return { allowed: false, limit: plan.burst, remaining: 0, resetSeconds: Math.max(1, Math.ceil(s.msToFull / 1000)) }
  }

  /**
   * Asks Redis for `want` tokens: the caller keeps one, the rest (if any) become the account's lease,
   * which runs from the answer, however long Redis took to give it. False when the bucket is empty.
   */
  private async askTokens(accountId: string, plan: Plan, s: AccountState, want: number): Promise<boolean> {
    this.redisCalls++
    const [granted, remaining, msToFull] = await this.redis.tokenBucket(
      redisKey(this.config, 'rate', accountId),
      plan.requestsPerSecond,
      plan.burst,
      this.now(),
      want,
    )
    if (want > 1) {
      s.tokens = Math.max(0, granted - 1)
      s.tokensUntil = this.now() + LEASE_MS
      s.tokensLeased = s.tokens
    }
    s.bucketRemaining = remaining
    s.msToFull = msToFull
    return granted > 0
  }

  /**
   * Leases the account's next tokens while the current lease is still spent from (RENEW_AT): they join what is
   * left of it, and the lease's life starts again. A busy account's demand decides the size, as for any lease, less
   * the tokens still held: unspent tokens are dropped when a lease ends, so asking for a full lease on top of them
   * would take the bucket's tokens faster than the requests come (4,000 requests within a burst of 10,000 saw
   * refusals). When those already cover the next lease's demand, only their life starts again: they were taken
   * from the bucket when granted. A failure leaves the lease to run out and the next request to ask as before.
   */
  private renewTokens(accountId: string, plan: Plan, s: AccountState): void {
    const now = this.now()
    const demand = s.requests.lease(now, plan.burst / 10)
    if (demand === 0) return
    const want = demand - s.tokens
    if (want < 2) {
      s.tokensUntil = now + LEASE_MS
      return
    }
    this.redisCalls++
    s.tokenRenewal = this.redis
      .tokenBucket(redisKey(this.config, 'rate', accountId), plan.requestsPerSecond, plan.burst, this.now(), want)
      .then(
        ([granted, remaining, msToFull]) => {
          if (granted > 0) {
            s.tokens += granted
            s.tokensLeased = s.tokens
            s.tokensUntil = this.now() + LEASE_MS
          }
          s.bucketRemaining = remaining
          s.msToFull = msToFull
        },
        () => {},
      )
      .finally(() => (s.tokenRenewal = undefined))
  }

  private dayKey(accountId: string, s?: AccountState): string {
    const now = this.now()
    const day = Math.floor(now / 86_400_000)
    if (s?.day === day) return s.dayKey
    const key = redisKey(this.config, 'points', accountId, new Date(now).toISOString().slice(0, 10))
    if (s) {
      s.day = day
      s.dayKey = key
    }
    return key
  }

  /**
   * Reserves `wanted` points of today's allowance; returns how many were
   * granted (all or none when `whole`, else as many as fit, in order).
   */
  async reservePoints(accountId: string, plan: Plan, wanted: number, whole: boolean): Promise<number> {
    const s = this.state(accountId)
    const key = this.dayKey(accountId, s)
    // Only single points are leased: a batch already pays one round trip for many points.
    if (wanted !== 1) return this.reserve(key, plan, wanted, whole, 0)
    if (this.takeLeasedPoint(accountId)) return 1
    s.points.note(1, this.now())
    const fromLease = () => {
      if (s.pointsKey !== key || s.pointsUntil <= this.now() || s.leasedPoints <= 0) return false
      s.leasedPoints--
      return true
    }
    if (fromLease()) return 1
    // As for request tokens (takeRequest): the renewal may be taking what is left of the day.
    if (s.pointRenewal) {
      await s.pointRenewal
      if (fromLease()) return 1
    }
    // As for request tokens: one lease request per account in flight, taken only when the last lease is
    // spent or over (so a process never holds more than one, at most 1% of what is left of the day);
    // requests that find nothing left after it, or that show no demand worth a lease, ask for their own point.
    if (s.pointRefill) {
      s.points.waited++
      s.points.concurrent = true
      await s.pointRefill
      return fromLease() ? 1 : this.reserve(key, plan, 1, true, 0)
    }
    if (s.pointAsks > 0) s.points.concurrent = true
    const extra = s.points.lease(this.now(), plan.pointsPerDay / 1000)
    if (extra === 0) {
      s.pointAsks++
      return this.reserve(key, plan, 1, true, 0).finally(() => s.pointAsks--)
    }
    const refill = this.reserve(key, plan, 1, true, extra, s)
    // Waiters only need to know it is over; the request that asked sees its own outcome, failure included.
    s.pointRefill = refill
      .then(
        () => {},
        () => {},
      )
      .finally(() => (s.pointRefill = undefined))
    return refill
  }

  /**
   * Whether takeLeasedPoint would give a point now and a moment from now (nothing taken). The caller takes it
   * later in the same turn: a lease in its last milliseconds (or a day about to end) is answered no, so that the
   * clock passing its end in between cannot turn a yes here into a refusal there (a write refused with a 500).
   */
  hasLeasedPoint(accountId: string): boolean {
    const s = this.accounts.get(accountId)
    if (!s || s.leasedPoints <= 0) return false
    const soon = this.now() + SAME_TURN_MS
    return s.pointsUntil > soon && s.pointsKey === this.dayKey(accountId, s) && Math.floor(soon / 86_400_000) === s.day
  }

  /**
   * One point of today's allowance from this process's lease, when it holds one: decided in memory, no
   * promise. False when reservePoints must decide (no lease, spent, over, or of another day).
   */
  takeLeasedPoint(accountId: string): boolean {
    const s = this.accounts.get(accountId)
    if (!s) return false
    const now = this.now()
    if (s.leasedPoints <= 0 || s.pointsUntil <= now || s.pointsKey !== this.dayKey(accountId, s)) return false
    s.lastSeen = now
    s.points.note(1, now)
    s.leasedPoints--
    if (!s.pointRenewal && !s.pointRefill && (s.leasedPoints * RENEW_AT < s.pointsLeased || (s.pointsUntil - now) * RENEW_AT < LEASE_MS))
      this.renewPoints(s)
    return true
  }

  /** As renewTokens does for request tokens: the next lease of the day joins this one, under the last lease's plan. */
  private renewPoints(s: AccountState): void {
    if (!s.plan) return
    const extra = s.points.lease(this.now(), s.plan.pointsPerDay / 1000)
    if (extra === 0) return
    s.pointRenewal = this.reserve(s.pointsKey, s.plan, 0, true, extra, s)
      .then(
        () => {},
        () => {},
      )
      .finally(() => (s.pointRenewal = undefined))
  }

  /** One trip to the day counter; a lease, when granted, goes to `s`. */
  private async reserve(key: string, plan: Plan, wanted: number, whole: boolean, extra: number, s?: AccountState): Promise<number> {
    this.redisCalls++
    const [granted, leased] = await this.redis.reservePoints(key, wanted, plan.pointsPerDay, whole ? '1' : '0', DAY_TTL_SECONDS, extra)
    if (s && leased > 0) {
      if (s.pointsKey !== key) this.endLease(s)
      s.pointsKey = key
      s.leasedPoints += leased
      s.pointsLeased = s.leasedPoints
      s.pointsUntil = this.now() + LEASE_MS
      s.plan = plan
    }
    return granted
  }

  /** Today's allowance used so far, leases included (the import preview reads it without taking any). */
  async pointsUsedToday(accountId: string): Promise<number> {
    this.redisCalls++
    return Number((await this.redis.get(this.dayKey(accountId))) ?? 0)
  }

  /** Gives back points reserved for writes that were not accepted after all. */
  async refundPoints(accountId: string, n: number): Promise<void> {
    if (n <= 0) return
    const s = this.accounts.get(accountId)
    const key = this.dayKey(accountId)
    // While a lease of today is live, a refund joins it: it is used or given back with the lease, and
    // needs no round trip that could fail now.
    if (s && s.pointsKey === key && s.pointsUntil > this.now()) {
      s.leasedPoints += n
      return
    }
    this.redisCalls++
    await this.redis.decrby(key, n)
  }

  /** Moves an account's unused leased points to what is owed to their day; the sweep gives them back. */
  private endLease(s: AccountState): void {
    if (s.leasedPoints > 0) this.owed.set(s.pointsKey, (this.owed.get(s.pointsKey) ?? 0) + s.leasedPoints)
    s.leasedPoints = 0
  }

  /** Ends expired leases, gives owed points back to their days, forgets accounts idle for a minute. */
  private async sweep(): Promise<void> {
    const now = this.now()
    for (const [id, s] of this.accounts) {
      if (s.pointsUntil <= now) this.endLease(s)
      if (s.lastSeen < now - 60_000 && !s.tokenRefill && !s.tokenRenewal && !s.pointRefill && !s.pointRenewal) this.accounts.delete(id)
    }
    for (const [key, n] of [...this.owed]) {
      this.owed.delete(key)
      this.redisCalls++
      // Redis is away: owed again, given back at a later sweep.
      await this.redis.decrby(key, n).catch(() => this.owed.set(key, (this.owed.get(key) ?? 0) + n))
    }
  }

  /**
   * Ends every lease now and gives its unused points back to their day, so that the day counter reads
   * exactly what was accepted (graceful shutdown; tests that read the counter).
   */
  async giveBackLeases(): Promise<void> {
    for (const s of this.accounts.values()) s.pointsUntil = 0
    this.sweeping = this.sweeping.then(() => this.sweep()).catch(() => {})
    await this.sweeping
  }

  /** Gives back every unused lease (graceful shutdown, before the Redis connection closes). */
  async close(): Promise<void> {
    clearInterval(this.sweeper)
    await this.giveBackLeases()
  }
}
