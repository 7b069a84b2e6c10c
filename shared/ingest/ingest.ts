// Accepting writes (docs/decisions.md §D-1): everything that can reject a point
// (kind conflict, free slot, stat limit, daily allowance, idempotency) is
// decided here, before the answer; accepted points are then durably queued
// through the group-commit batcher, and only then are their ikeys recorded.
// A rejection leaves nothing behind: quota is refunded and stats this write
// created are dropped.
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import { AppError, invalid, unavailable } from '../errors.js'
import type { QueuedPoint } from '../jobs.js'
import { claimFreeSlot, type Account } from '../accounts/repo.js'
import { planOf, type Plan } from '../plans.js'
import { dropUnusedStats, MAX_SERIES_PER_STAT, type Kind, type SeriesRef, type Stat } from '../stats/repo.js'
import { seriesKey, type Tags } from './tags.js'
import type { StatDirectory } from '../stats/directory.js'
import type { PointBatcher } from './batcher.js'
import type { Idempotency, IkeyClaim } from './idempotency.js'
import type { RedisSettings } from '../redis.js'
import type { Limits } from './limits.js'
import { seriesOf, type ValidPoint } from './point.js'

export type Replay = 'averages_with_existing' | 'sums_with_existing' | 'duplicate_ignored'

export interface BatchOutcome {
  accepted: number
  duplicates: number
  /** Set when a quota or insert failure stopped a sequential batch part-way. */
  stoppedBy?: AppError
}

export interface IngestDeps {
  config: Pick<Config, 'freeTierSlots'>
  sql: Sql
  directory: StatDirectory
  limits: Limits
  idempotency: Idempotency
  batcher: PointBatcher
  /** Writes are refused while Redis runs with an evicting maxmemory-policy. */
  redisSettings?: Pick<RedisSettings, 'writeRefusal'>
  /** Told when recording ikeys after queueing failed (the write still succeeded). */
  onRecordFailed?: (err: Error) => void
}

const quota = (code: string, message: string) => new AppError('quota', code, message)

/** The refusal of a write past the plan's daily allowance (the protocol routes answer it before parsing, too). */
export const dailyPointLimit = (plan: Pick<Plan, 'name' | 'pointsPerDay'>) =>
  quota('daily_point_limit', `plan limit reached: the ${plan.name} plan records at most ${plan.pointsPerDay} points per day`)

/** The answer of a write with nothing to disclose (shared: callers only read it). */
const NO_REPLAY: { replay?: Replay } = Object.freeze({})

export class Ingest {
  /** Free accounts known to hold a slot: a slot, once claimed, is never given back. */
  private readonly slotHolders = new Set<string>()

  constructor(private readonly deps: IngestDeps) {}

  /** One point (legacy single writes and the v1 count/value routes). */
  writeOne(account: Account, point: ValidPoint, nowSeconds: number): Promise<{ replay?: Replay }> {
    this.refuseUnsafeRedis()
    return this.writeOneInMemory(account, point, nowSeconds) ?? this.writeOneChecked(account, point, nowSeconds)
  }

  /** One point decided the long way: kind, ikey, allowance and stat creation with Redis and PostgreSQL (accept()). */
  private async writeOneChecked(account: Account, point: ValidPoint, nowSeconds: number): Promise<{ replay?: Replay }> {
    const known = await this.checkKinds(account, [point])
    const existing = known.get(seriesOf(point))
    // A deduplicated retry is answered before any allowance is taken: it is not billed.
    let early: IkeyClaim | undefined
    if (point.ikey && existing) {
      early = { statId: existing.id, t: point.t ?? nowSeconds, ikey: point.ikey }
      if (!(await this.deps.idempotency.fresh([early]))[0]) return { replay: 'duplicate_ignored' }
    }
    const outcome = await this.accept(account, [point], 'all', nowSeconds, early, known)
    if (outcome.duplicates) return { replay: 'duplicate_ignored' }
    return outcome.replay ? { replay: outcome.replay } : {}
  }

  /**
   * The common single write, decided without Redis or PostgreSQL: no t (so no replay to disclose) and no ikey,
   * its stat known to this process with the point's kind, the free slot (if any) already held, and a point of
   * today's allowance leased here. Anything else takes accept(), which decides the same rules the long way
   * (this is most single writes of a busy account, and the checks' maps, arrays and promises were a
   * measurable share of a write). undefined when the write must take that way.
   */
  private writeOneInMemory(account: Account, point: ValidPoint, nowSeconds: number): Promise<{ replay?: Replay }> | undefined {
    const stat = this.inMemorySeries(account, point)
    return stat && this.queueInMemory(account, stat, point, nowSeconds)
  }

  /**
   * The series of a single point that writeOneInMemory can decide (see there), looked at without taking anything:
   * undefined when the point must take the long way. The direct write route (api/direct-writes.ts) asks this
   * before it takes a request from the rate lease, so that a point it cannot decide has taken nothing.
   */
  inMemorySeries(account: Account, point: ValidPoint): Stat | undefined {
    if (point.t !== undefined || point.ikey !== undefined) return undefined
    if (this.deps.redisSettings?.writeRefusal()) return undefined
    if (account.plan === 'free' && !this.slotHolders.has(account.id)) return undefined
    const stat = this.deps.directory.cached(account.id, seriesOf(point))
    if (!stat || stat.kind !== point.kind) return undefined
    return this.deps.limits.hasLeasedPoint(account.id) ? stat : undefined
  }

  /** Queues a point inMemorySeries answered for, in the same turn: its allowance from the lease that answer saw. */
  queueInMemory(account: Account, stat: Stat, point: ValidPoint, nowSeconds: number): Promise<{ replay?: Replay }> {
    return new Promise((resolve, reject) =>
      this.queueInMemoryThen(account, stat, point, nowSeconds, (err) => (err === undefined ? resolve(NO_REPLAY) : reject(err))),
    )
  }

  /**
   * queueInMemory() told through a callback (the direct write route answers every write from it, without a
   * promise): no error once the point is durably queued; the refusal when it could not be.
   */
  queueInMemoryThen(account: Account, stat: Stat, point: ValidPoint, nowSeconds: number, done: (err?: Error) => void): void {
    if (!this.deps.limits.takeLeasedPoint(account.id)) return done(new Error('the leased point was taken meanwhile'))
    this.deps.batcher.addOne([stat.id, nowSeconds, point.value, null], (err) => {
      if (err === undefined) return done()
      const refusal = unavailable(`could not queue the points: ${(err as Error).message}`)
      this.deps.limits.refundPoints(account.id, 1).then(
        () => done(refusal),
        () => done(refusal),
      )
    })
  }

  /**
   * Several points. 'all': all-or-nothing quota (v1 /points). 'prefix': items
   * commit in order and a quota failure stops there (the /ez JSON batch).
   * Malformed input was already refused by validation; kind conflicts are refused here, before anything is
   * stored, each listed by index under `label` (`data[3]: type conflict ...`).
   */
  async writeMany(
    account: Account,
    points: ValidPoint[],
    mode: 'all' | 'prefix',
    nowSeconds: number,
    label: string,
  ): Promise<BatchOutcome> {
    if (!points.length) return { accepted: 0, duplicates: 0 }
    this.refuseUnsafeRedis()
    const known = await this.checkKinds(account, points, label)
    const { accepted, duplicates, stoppedBy } = await this.accept(account, points, mode, nowSeconds, undefined, known, label)
    return { accepted, duplicates, stoppedBy }
  }

  private refuseUnsafeRedis(): void {
    const refusal = this.deps.redisSettings?.writeRefusal()
    if (refusal) throw refusal
  }

  /**
   * Refuses points whose kind differs from their stat's, or from an earlier point of the same batch.
   * Returns the points' existing series by seriesKey.
   */
  private async checkKinds(account: Account, points: ValidPoint[], label?: string): Promise<Map<string, Stat>> {
    const refs = new Map<string, SeriesRef>()
    for (const p of points) if (!refs.has(seriesOf(p))) refs.set(seriesOf(p), { name: p.name, tags: p.tags, series: p.series })
    const existing = await this.deps.directory.existing(account.id, [...refs.values()])
    refuseKindConflicts(points, existing, label)
    return existing
  }

  /**
   * Takes allowance, creates stats, checks ikeys and queues the points, in
   * that order; any failure undoes what was taken. Once queued, the ikeys are
   * recorded. `early` is an ikey the caller already found fresh for the first point; `known`, the
   * points' stats that checkKinds found (the same look-up, not asked twice).
   */
  private async accept(
    account: Account,
    points: ValidPoint[],
    mode: 'all' | 'prefix',
    nowSeconds: number,
    early: IkeyClaim | undefined,
    known: Map<string, Stat>,
    label?: string,
  ): Promise<BatchOutcome & { replay?: Replay }> {
    const { limits, idempotency, sql, config } = this.deps
    const plan = planOf(account.plan)
    const whole = mode === 'all'
    let take = 0
    const created: Stat[] = []
    const undo = async () => {
      await limits.refundPoints(account.id, take).catch(() => {})
      await dropUnusedStats(
        sql,
        created.map((s) => s.id),
      ).catch(() => {})
      // Or the next write of the same name here would queue its points under the dropped id, where they die unseen.
      for (const s of created) this.deps.directory.evictSeries(s.accountId, seriesKey(s.name, s.tags))
    }
    try {
      if (account.plan === 'free' && !this.slotHolders.has(account.id)) {
        if (!(await claimFreeSlot(sql, account.id, config.freeTierSlots))) {
          throw quota('free_tier_full', 'free tier is full: every free slot is taken; upgrade to a paid plan to record data')
        }
        this.slotHolders.add(account.id)
      }

      // 1. Today's allowance, in order.
      // Errors are built only when needed: capturing a stack on every accepted write is measurable.
      const dailyLimit = () => dailyPointLimit(plan)
      take = await limits.reservePoints(account.id, plan, points.length, whole)
      if (take === 0) throw dailyLimit()
      let stoppedBy = take < points.length ? dailyLimit() : undefined

      // 2. Stats, created in order of first appearance within the plan's stat limit.
      const made = await this.ensureStats(account, take === points.length ? points : points.slice(0, take), whole, created, known)
      const stats = made.stats
      // A stat another request (in this process or another) created since checkKinds looked may hold the
      // other kind: the losing kind is refused here, before anything of it is queued (docs/decisions.md §I-2.2 rule 7).
      if (made.adopted) refuseKindConflicts(points.slice(0, made.stopAt ?? take), stats, label)
      if (made.stopAt !== undefined) {
        await limits.refundPoints(account.id, take - made.stopAt)
        take = made.stopAt
        stoppedBy = made.stoppedBy
      }

      // 3. Idempotency keys (stat + t + ikey, first write wins), the replay disclosure, the queue, then the keys' record.
      const accepted = points.slice(0, take).map((p) => ({ p, stat: stats.get(seriesOf(p))!, t: p.t ?? nowSeconds }))
      const toCheck = accepted.filter((a, i) => a.p.ikey && !(early && i === 0))
      // Most writes carry no ikey: no await (a microtask and a promise) for an empty check.
      const fresh = toCheck.length ? await idempotency.fresh(toCheck.map((a) => ({ statId: a.stat.id, t: a.t, ikey: a.p.ikey! }))) : []
      const dupes = new Set(toCheck.filter((_, i) => !fresh[i]))
      const toRecord: IkeyClaim[] = early ? [early] : []
      toCheck.forEach((a, i) => {
        if (fresh[i]) toRecord.push({ statId: a.stat.id, t: a.t, ikey: a.p.ikey! })
      })
      const queued: QueuedPoint[] = accepted.filter((a) => !dupes.has(a)).map((a) => [a.stat.id, a.t, a.p.value, a.p.ikey ?? null])
      let replay: Replay | undefined
      const seen: Array<{ statId: string; t: number }> = []
      if (points.length === 1 && queued.length === 1 && points[0].t !== undefined) {
        // Marked even for a new stat, so that the next write at this second is told.
        seen.push({ statId: queued[0][0], t: queued[0][1] })
        const before = await idempotency.seenBefore(sql, queued[0][0], queued[0][1]).catch(() => false)
        if (before && !created.length) replay = points[0].kind === 'counter' ? 'sums_with_existing' : 'averages_with_existing'
      }
      if (queued.length) {
        await this.deps.batcher.add(queued).catch((err: Error) => {
          throw unavailable(`could not queue the points: ${err.message}`)
        })
        // The points are queued: from here on nothing is undone. A record that fails (Redis gone right after the
        // job was acknowledged) only means a retry is queued again, and point_ikeys drops it.
        if (toRecord.length || seen.length) await idempotency.record(toRecord, seen).catch((err: Error) => this.deps.onRecordFailed?.(err))
      }
      return { accepted: take, duplicates: dupes.size, stoppedBy, replay }
    } catch (err) {
      await undo()
      // A sequential batch stopped by a quota before its first item reports how far it got, like any other stop.
      if (!whole && err instanceof AppError && err.kind === 'quota') return { accepted: 0, duplicates: 0, stoppedBy: err }
      throw err
    }
  }

  /**
   * The stats of `points`, creating the missing ones (pushed to `created`) within the plan's stat
   * limit: all or none when `whole`, else one by one in order of first appearance, stopping at the
   * first point whose stat does not fit (`stopAt`, its index). `adopted`: a missing stat turned out to
   * exist (another request created it meanwhile), so its kind is not yet checked.
   */
  private async ensureStats(account: Account, points: ValidPoint[], whole: boolean, created: Stat[], known: Map<string, Stat>) {
    const plan = planOf(account.plan)
    const stats = new Map<string, Stat>()
    for (const p of points) {
      const s = known.get(seriesOf(p))
      if (s) stats.set(seriesOf(p), s)
    }
    const missing = new Map<string, { name: string; kind: Kind; tags?: Tags }>()
    for (const p of points)
      if (!stats.has(seriesOf(p)) && !missing.has(seriesOf(p))) missing.set(seriesOf(p), { name: p.name, kind: p.kind, tags: p.tags })
    // Plans count series (docs/decisions.md §24): the free tier's 10 tracked stats are 10 series.
    const statLimit = () => quota('stat_limit', `plan limit reached: the ${plan.name} plan tracks at most ${plan.trackedStats} stats`)
    const seriesLimit = (name: string) =>
      quota('series_limit', `series limit reached: stat "${name}" holds at most ${MAX_SERIES_PER_STAT} series (tag sets)`)
    let adopted = false
    for (const group of whole ? [[...missing.values()]] : [...missing.values()].map((m) => [m])) {
      if (!group.length) continue
      const made = await this.deps.directory.create(account.id, group, plan.trackedStats)
      if (!(made instanceof Map)) {
        const refusal = made.limit === 'series' ? seriesLimit(made.name) : statLimit()
        const first = seriesKey(group[0].name, group[0].tags)
        const stopAt = points.findIndex((p) => seriesOf(p) === first)
        if (whole || stopAt === 0) throw refusal
        return { stats, stopAt, stoppedBy: refusal, adopted }
      }
      for (const r of made.values()) {
        stats.set(seriesKey(r.stat.name, r.stat.tags), r.stat)
        if (r.created) created.push(r.stat)
        // A new series takes its stat's kind, which may not be the point's: checked like an adopted stat.
        if (!r.created || r.stat.parentId) adopted = true
      }
    }
    return { stats, stopAt: undefined, stoppedBy: undefined, adopted }
  }
}

/**
 * Refuses points whose kind differs from their stat's (in `stats`, by name) or from an earlier point of the
 * same batch; each is listed by index under `label` when there is one.
 */
function refuseKindConflicts(points: ValidPoint[], stats: Map<string, Stat>, label?: string): void {
  const kinds = new Map<string, Kind>([...stats.values()].map((s) => [s.name, s.kind]))
  const field = (k: Kind) => (k === 'counter' ? 'count' : 'value')
  const errors: Array<{ index: number; detail: string; code: string }> = []
  points.forEach((p, index) => {
    const kind = kinds.get(p.name)
    if (kind && kind !== p.kind)
      errors.push({
        index,
        code: 'kind_conflict',
        detail: `type conflict: stat "${p.name}" is a ${kind}; send ${field(kind)}, not ${field(p.kind)}`,
      })
    else kinds.set(p.name, p.kind)
  })
  if (!errors.length) return
  const first = errors[0]
  throw invalid('kind_conflict', label ? `${label}[${first.index}]: ${first.detail}` : first.detail, label ? { errors } : {})
}
