// An API process's cache of stat name -> (id, kind), so that a hot writer does
// not cost a query per point. A delete publishes on Redis and every process
// evicts at once; entries also expire, bounding staleness if a message is missed.
// An entry in use is re-read in the background once it is past half its life
// (one query per account for all its names due), so that a hot writer does not
// wait on PostgreSQL when its stats' entries expire. Entries are series (docs/decisions.md §24), keyed by
// seriesKey(name, tags): the stat name alone for its untagged series, so an untagged write looks up its name.
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import { InFlight } from '../in-flight.js'
import { redisKey } from '../redis.js'
import { seriesKey, type Tags } from '../ingest/tags.js'
import { createStats, findSeriesRows, type CreateRefusal, type Kind, type SeriesRef, type Stat } from './repo.js'

const TTL_MS = 5_000
const MAX_ENTRIES = 100_000
/** Names due for a background re-read are collected this long, then read with one query per account. */
const REFRESH_BATCH_MS = 250

export type Resolved = { stat: Stat; created: boolean }

interface Entry {
  stat: Stat
  until: number
  /** Set once the entry is due for its background re-read; the re-read replaces the entry. */
  due?: true
}

export class StatDirectory {
  /** By account, then by name: a look-up hashes the name the request already holds, not a key built per point. */
  private readonly cache = new Map<string, Map<string, Entry>>()
  private entries = 0
  private readonly loading = new InFlight<string, Stat | undefined>()
  private readonly creating = new InFlight<string, Map<string, Resolved> | CreateRefusal>()
  /** Bumped by every eviction: a look-up that started before one does not cache what it found. */
  private evictions = 0
  /** Series to re-read in the background, by account, then by key. */
  private readonly due = new Map<string, Map<string, SeriesRef>>()
  private dueTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  private static key(accountId: string, name: string) {
    return `${accountId}\n${name}`
  }

  /** A series this process holds a live entry for (no query, no promise), by seriesKey; undefined when existing() must look. */
  cached(accountId: string, key: string): Stat | undefined {
    const hit = this.cache.get(accountId)?.get(key)
    if (!hit) return undefined
    const now = this.now()
    if (hit.until <= now) return undefined
    // Marked once: the writes that follow until the re-read lands do not each build a key and look it up again.
    if (!hit.due && hit.until - now < TTL_MS / 2) {
      hit.due = true
      if (!this.loading.get(StatDirectory.key(accountId, key))) this.refreshLater(accountId, key, hit.stat)
    }
    return hit.stat
  }

  /** Existing series among `refs` (cached), by seriesKey. */
  async existing(accountId: string, refs: SeriesRef[]): Promise<Map<string, Stat>> {
    const out = new Map<string, Stat>()
    const waits: Array<Promise<void>> = []
    const misses: SeriesRef[] = []
    for (const ref of refs) {
      const key = ref.series ?? (ref.tags ? seriesKey(ref.name, ref.tags) : ref.name)
      const hit = this.cached(accountId, key)
      if (hit) out.set(key, hit)
      else {
        const pending = this.loading.get(StatDirectory.key(accountId, key))
        if (pending) waits.push(pending.then((s) => void (s && out.set(key, s))))
        else misses.push(ref)
      }
    }
    if (misses.length)
      waits.push(
        this.load(accountId, misses).then((found) => {
          for (const s of found) out.set(seriesKey(s.name, s.tags), s)
        }),
      )
    if (waits.length) await Promise.all(waits)
    return out
  }

  private refreshLater(accountId: string, key: string, stat: Stat): void {
    let names = this.due.get(accountId)
    if (!names) this.due.set(accountId, (names = new Map()))
    names.set(key, { name: stat.name, tags: stat.tags ?? undefined })
    this.dueTimer ??= setTimeout(() => {
      this.dueTimer = undefined
      const due = [...this.due]
      this.due.clear()
      // A failed re-read leaves the entries to expire; the request that then misses reads in line and sees the error.
      for (const [account, refs] of due) void this.load(account, [...refs.values()]).catch(() => {})
    }, REFRESH_BATCH_MS).unref()
  }

  /**
   * One query for names nobody is looking up yet; requests that miss the same names meanwhile (many
   * writers of one stat when its entry expires) wait for it instead of each sending their own.
   */
  private load(accountId: string, refs: SeriesRef[]): Promise<Stat[]> {
    const evictions = this.evictions
    const query = findSeriesRows(this.sql, accountId, refs).then((found) => {
      if (evictions === this.evictions) for (const s of found) this.remember(s)
      return found
    })
    // The found series by key, built once: a look-up per ref (a search of the rows per ref cost refs x rows keys).
    const byKey = query.then((found) => new Map(found.map((s) => [seriesKey(s.name, s.tags), s])))
    for (const ref of refs) {
      const key = ref.series ?? seriesKey(ref.name, ref.tags)
      this.loading.track(
        StatDirectory.key(accountId, key),
        byKey.then((found) => found.get(key)),
      )
    }
    return query
  }

  /**
   * Creates the missing series within the limits (all or none); a refusal when a limit would be passed.
   * Requests asking for the same new stats meanwhile (many writers of a stat that does not exist yet)
   * share one creation; only the first is told it created them, so only it may undo them.
   */
  async create(
    accountId: string,
    wanted: Array<{ name: string; kind: Kind; tags?: Tags }>,
    limit: number,
  ): Promise<Map<string, Resolved> | CreateRefusal> {
    const key = [accountId, ...wanted.map((w) => `${w.kind}:${seriesKey(w.name, w.tags)}`)].join('\n')
    const pending = this.creating.get(key)
    if (pending) {
      const made = await pending
      return made instanceof Map ? new Map([...made].map(([name, r]) => [name, { stat: r.stat, created: false }])) : made
    }
    return this.creating.track(
      key,
      createStats(this.sql, accountId, wanted, limit).then((made) => {
        if (made instanceof Map) for (const r of made.values()) this.remember(r.stat)
        return made
      }),
    )
  }

  private remember(stat: Stat): void {
    if (this.entries >= MAX_ENTRIES) {
      this.cache.clear()
      this.entries = 0
    }
    let names = this.cache.get(stat.accountId)
    if (!names) this.cache.set(stat.accountId, (names = new Map()))
    const key = stat.tags ? seriesKey(stat.name, stat.tags) : stat.name
    if (!names.has(key)) this.entries++
    // Expiry on whole seconds: an account's entries read within the same second come due together and are
    // re-read by one query, rather than one query per stat as each comes due on its own.
    names.set(key, { stat, until: Math.ceil((this.now() + TTL_MS) / 1000) * 1000 })
  }

  /** Forgets one stat and its series (after a delete, here or in another process). */
  evict(accountId: string, name: string): void {
    this.evictions++
    const names = this.cache.get(accountId)
    if (names?.delete(name)) this.entries--
    this.loading.forget(StatDirectory.key(accountId, name))
    if (!names) return
    const prefix = `${name}\u0000`
    for (const key of names.keys())
      if (key.startsWith(prefix)) {
        names.delete(key)
        this.entries--
        this.loading.forget(StatDirectory.key(accountId, key))
      }
  }

  /** Forgets one series (a write that created it was undone). */
  evictSeries(accountId: string, key: string): void {
    this.evictions++
    if (this.cache.get(accountId)?.delete(key)) this.entries--
    this.loading.forget(StatDirectory.key(accountId, key))
  }

  /** Listens for deletes announced by any process. */
  async subscribe(config: Pick<Config, 'redisPrefix'>, subscriber: Redis): Promise<void> {
    const channel = statsChangedChannel(config)
    subscriber.on('message', (ch: string, message: string) => {
      if (ch !== channel) return
      const [accountId, name] = message.split('\n')
      if (accountId && name !== undefined) this.evict(accountId, name)
    })
    await subscriber.subscribe(channel)
  }
}

export function statsChangedChannel(config: Pick<Config, 'redisPrefix'>): string {
  return redisKey(config, 'stats-changed')
}

/** Tells every API process that a stat is gone (DELETE /api/v1/stats/:name publishes this). */
export async function publishStatDeleted(
  redis: Redis,
  config: Pick<Config, 'redisPrefix'>,
  accountId: string,
  name: string,
): Promise<void> {
  await redis.publish(statsChangedChannel(config), `${accountId}\n${name}`)
}
