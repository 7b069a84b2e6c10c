// StatsD intake (docs/decisions.md §21), whatever the transport: the UDP and TCP edges hand it datagrams or lines.
// A packet is all or nothing: any bad line, or a key no account holds, refuses the whole packet, and UDP has
// no answer, so refusals are counted instead (per account for its usage, and in total for health). Accepted
// packets of one account are collected for at most FLUSH_MS and written as one all-or-nothing batch through
// Ingest.writeMany, as /api/v1/points writes: names, quotas, the plan's stat count and the queue are the same,
// and each flush takes one request from the account's rate, as one HTTP request would.
import type { Redis } from 'ioredis'
import type { Account } from '../../accounts/repo.js'
import type { KeyResolver } from '../../auth/key-resolver.js'
import type { Config } from '../../config.js'
import { AppError } from '../../errors.js'
import type { Logger } from '../../log.js'
import { planOf } from '../../plans.js'
import { redisKey } from '../../redis.js'
import type { Ingest } from '../ingest.js'
import type { Limits } from '../limits.js'
import type { ValidPoint } from '../point.js'
import { parseStatsdLine } from './statsd.js'

/** How long accepted packets wait to be written with the account's others (a StatsD server's flush, but short). */
export const FLUSH_MS = 50
/** A flush starts early at this many points. */
const FLUSH_POINTS = 5_000
/** Points an account may have waiting (Redis slow or down); packets past it are refused. */
const MAX_PENDING_POINTS = 200_000
const COUNT_TTL_SECONDS = 3 * 86_400
/** Parsed lines kept (a StatsD client repeats the same few lines: `hits:1|c`); cleared when full. */
const LINE_CACHE_MAX = 10_000
/** How long a key's account is taken from this intake's own map: a revoked key stops within this. */
const KEY_CACHE_MS = 1_000

export interface StatsdIntakeDeps {
  ingest: Ingest
  keys: KeyResolver
  limits: Limits
  redis: Redis
  config: Pick<Config, 'redisPrefix'>
  log: Logger
}

interface Pending {
  account: Account
  points: ValidPoint[]
  /** Points per packet, in order, so a refusal can be told per packet. */
  packets: number[]
  timer?: NodeJS.Timeout
}

/** Redis keys of the refusal counts: per account and day, and the day's totals. */
export function statsdCountKey(
  config: Pick<Config, 'redisPrefix'>,
  what: 'refused' | 'accepted',
  accountId: string | null,
  day = new Date().toISOString().slice(0, 10),
): string {
  return accountId ? redisKey(config, 'statsd', what, accountId, day) : redisKey(config, 'statsd', what, day)
}

/** Today's refused StatsD packets of an account (null: of every account and of unknown keys). */
export async function statsdRefusedToday(redis: Redis, config: Pick<Config, 'redisPrefix'>, accountId: string | null): Promise<number> {
  return Number((await redis.get(statsdCountKey(config, 'refused', accountId))) ?? 0)
}

/** A line's parse as the cache holds it: frozen, shared by every packet of that line. */
type CachedParse =
  | { ok: true; value: { readonly key: string; readonly points: readonly Readonly<ValidPoint>[] } }
  | { ok: false; code: string; message: string }

function freezeParse(parsed: ReturnType<typeof parseStatsdLine>): CachedParse {
  if (parsed.ok) {
    for (const p of parsed.value.points) Object.freeze(p)
    Object.freeze(parsed.value.points)
    Object.freeze(parsed.value)
  }
  return Object.freeze(parsed)
}

export class StatsdIntake {
  private readonly pending = new Map<string, Pending>()
  private readonly flushing = new Set<Promise<void>>()
  /** Counts not yet added to Redis: key -> n. */
  private readonly counts = new Map<string, number>()
  private readonly countTimer: NodeJS.Timeout
  private lastWarnAt = 0
  private lastFaultAt = 0
  /** Lines without a |T timestamp (their outcome does not depend on the clock) -> their parse. */
  private readonly lines = new Map<string, CachedParse>()
  private readonly accountsByKey = new Map<string, { account: Account; until: number }>()
  /** Since start, in this process (tests and the benchmark read them). */
  readonly totals = { packets: 0, accepted: 0, refused: 0 }

  constructor(private readonly deps: StatsdIntakeDeps) {
    this.countTimer = setInterval(() => void this.saveCounts(), 1_000).unref()
  }

  /**
   * A line's parse, from the cache when the line was seen (20,000 packets a second are mostly the same lines).
   * A cached parse is shared by every later packet of that line, so it is frozen, points and all: a caller that
   * tried to add to it (a repeated line once grew the cached array, storing points never sent and, at
   * 25 repeats in one datagram, overflowing the stack) fails loudly instead of corrupting later packets.
   */
  private parse(line: string, now: number): CachedParse {
    const hit = this.lines.get(line)
    if (hit) return hit
    const parsed = freezeParse(parseStatsdLine(line, now))
    if (!line.includes('|T')) {
      if (this.lines.size >= LINE_CACHE_MAX) this.lines.clear()
      this.lines.set(line, parsed)
    }
    return parsed
  }

  /**
   * One datagram, or one line of a TCP stream. Never throws and never rejects: a refusal is counted, and so is
   * a fault of our own while handling the packet (it is that packet's, not the process's). Decided without a
   * promise when its lines and key were seen within the last second (the common case).
   */
  packet(text: string): void | Promise<void> {
    try {
      const done = this.packetUnguarded(text)
      return done?.catch((err: unknown) => this.fault(err))
    } catch (err) {
      return this.fault(err)
    }
  }

  private fault(err: unknown): void {
    this.refuse(undefined, 1, 'internal error')
    // A fault repeats with its packet: logged at most every 10 s, as refusals are.
    if (Date.now() - this.lastFaultAt > 10_000) {
      this.lastFaultAt = Date.now()
      this.deps.log.error('statsd packet failed', { error: err })
    }
  }

  private packetUnguarded(text: string): void | Promise<void> {
    this.totals.packets++
    // The common packet: one line of one key seen lately.
    if (!text.includes('\n')) {
      const parsed = this.parse(text, Math.floor(Date.now() / 1000))
      const known = parsed.ok ? this.accountsByKey.get(parsed.value.key) : undefined
      if (parsed.ok && known && known.until > Date.now()) return this.add(known.account, parsed.value.points)
    }
    return this.packetSlowly(text)
  }

  private async packetSlowly(text: string): Promise<void> {
    const now = Math.floor(Date.now() / 1000)
    const byKey = new Map<string, ValidPoint[]>()
    let refusal: string | undefined
    let firstKey: string | undefined
    let lineNo = 0
    for (const raw of text.split('\n')) {
      lineNo++
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
      if (!line) continue
      const parsed = this.parse(line, now)
      if (!parsed.ok) {
        refusal = `line ${lineNo}: ${parsed.message}`
        firstKey ??= line.slice(0, Math.max(0, line.indexOf('.')))
        break
      }
      firstKey ??= parsed.value.key
      // The packet's own list: the parse is shared with every packet of the same line.
      let list = byKey.get(parsed.value.key)
      if (!list) byKey.set(parsed.value.key, (list = []))
      for (const p of parsed.value.points) list.push(p)
    }
    // A bad line of a known key is counted for that account, so its owner sees it in their usage.
    const accounts = new Map<string, Account>()
    for (const key of refusal ? (firstKey ? [firstKey] : []) : byKey.keys()) {
      const resolved = await this.deps.keys.resolve(key).catch(() => null)
      if (resolved) {
        accounts.set(key, resolved.account)
        this.accountsByKey.set(key, { account: resolved.account, until: Date.now() + KEY_CACHE_MS })
      } else if (!refusal) refusal = 'unknown API key'
    }
    if (refusal) return this.refuse(firstKey ? accounts.get(firstKey)?.id : undefined, 1, refusal)
    // Several keys in one datagram: each key's points are a packet of that account.
    for (const [key, points] of byKey) if (points.length) this.add(accounts.get(key)!, points)
  }

  private add(account: Account, points: readonly ValidPoint[]): void {
    let p = this.pending.get(account.id)
    if (!p) this.pending.set(account.id, (p = { account, points: [], packets: [] }))
    if (p.points.length + points.length > MAX_PENDING_POINTS) {
      this.refuse(account.id, 1, 'too many points waiting to be written')
      return
    }
    // Cached parses share their point objects: nothing downstream changes a point.
    if (points.length === 1) p.points.push(points[0])
    else for (const point of points) p.points.push(point)
    p.packets.push(points.length)
    if (p.points.length >= FLUSH_POINTS) this.flushAccount(account.id)
    else p.timer ??= setTimeout(() => this.flushAccount(account.id), FLUSH_MS)
  }

  private flushAccount(accountId: string): void {
    const p = this.pending.get(accountId)
    if (!p) return
    clearTimeout(p.timer)
    this.pending.delete(accountId)
    const run = this.write(p).finally(() => this.flushing.delete(run))
    this.flushing.add(run)
  }

  /** Writes one account's waiting packets; packets whose points conflict with their stat's kind are refused alone. */
  private async write(p: Pending): Promise<void> {
    const { account } = p
    try {
      const rate = await this.deps.limits.takeRequest(account.id, planOf(account.plan))
      if (!rate.allowed) return this.refuse(account.id, p.packets.length, 'rate limit exceeded')
      const now = Math.floor(Date.now() / 1000)
      try {
        await this.deps.ingest.writeMany(account, p.points, 'all', now, 'points')
        this.accept(account.id, p.packets.length)
      } catch (err) {
        const conflicts =
          err instanceof AppError && err.code === 'kind_conflict' ? (err.extra.errors as Array<{ index: number }> | undefined) : undefined
        if (!conflicts) throw err
        // Refuse the packets holding a conflicting point; the others are written without them.
        const bad = new Set(conflicts.map((c) => packetOf(p.packets, c.index)))
        const keep: ValidPoint[] = []
        let at = 0
        p.packets.forEach((n, i) => {
          if (!bad.has(i)) keep.push(...p.points.slice(at, at + n))
          at += n
        })
        this.refuse(account.id, bad.size, (err as Error).message)
        if (keep.length) {
          await this.deps.ingest.writeMany(account, keep, 'all', now, 'points')
          this.accept(account.id, p.packets.length - bad.size)
        }
      }
    } catch (err) {
      this.refuse(account.id, p.packets.length, (err as Error).message)
    }
  }

  private accept(accountId: string, packets: number): void {
    this.totals.accepted += packets
    this.bump(statsdCountKey(this.deps.config, 'accepted', null), packets)
    this.bump(statsdCountKey(this.deps.config, 'accepted', accountId), packets)
  }

  private refuse(accountId: string | undefined, packets: number, why: string): void {
    this.totals.refused += packets
    this.bump(statsdCountKey(this.deps.config, 'refused', null), packets)
    if (accountId) this.bump(statsdCountKey(this.deps.config, 'refused', accountId), packets)
    // No answer goes back, so the log says why, at most every 10 s (a broken sender repeats itself).
    if (Date.now() - this.lastWarnAt > 10_000) {
      this.lastWarnAt = Date.now()
      this.deps.log.warn('statsd packet refused', { account_id: accountId, reason: why })
    }
  }

  private bump(key: string, n: number): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + n)
  }

  /** Adds the counts to Redis; what fails is kept for the next try. */
  async saveCounts(): Promise<void> {
    if (!this.counts.size) return
    const batch = [...this.counts]
    this.counts.clear()
    const pipe = this.deps.redis.pipeline()
    for (const [key, n] of batch) pipe.incrby(key, n).expire(key, COUNT_TTL_SECONDS)
    const results = await pipe.exec().catch(() => null)
    if (!results || results.some(([err]) => err)) for (const [key, n] of batch) this.bump(key, n)
  }

  /** Writes everything waiting and saves the counts (shutdown, tests). */
  async flush(): Promise<void> {
    for (const id of [...this.pending.keys()]) this.flushAccount(id)
    await Promise.all([...this.flushing])
    await this.saveCounts()
  }

  async close(): Promise<void> {
    await this.flush()
    clearInterval(this.countTimer)
  }
}

function packetOf(sizes: number[], index: number): number {
  let at = 0
  for (let i = 0; i < sizes.length; i++) {
    at += sizes[i]
    if (index < at) return i
  }
  return sizes.length - 1
}
