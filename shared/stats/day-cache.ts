// Decoded day blobs (sql/0050, rollup_days) kept in the process between reads. A closed day's blob never changes:
// a late write deletes it and the builder packs a new one, with a new `version` (sql/0051). So a read names the
// versions it holds, and the statement sends only the blobs whose version it does not name (rollupParts): a
// dashboard or a Grafana panel asking for the same week again reads 700 small rows instead of 5 MB of buckets,
// and decodes nothing. Every answer still comes from one statement's snapshot: a cached day is used only where
// that statement found its blob, at that version (when every day of a read is held, by a count of the blobs and a
// sum of their versions: rollupParts' checked read).
//
// Bounded by bytes (ROLLUP_CACHE_MB, 0 turns it off), least recently used out first. Per process: each web and
// worker process keeps its own.

/**
 * A whole day's buckets by slot (slot i starts at the day's midnight + i x the bucket's size): point count and sum
 * side by side, at 2i and 2i + 1, both 0 where the day has no such bucket. Laid out so, a read copies a stretch of
 * slots rather than placing each bucket, and a slot's count and sum are one memory read apart: PromQL's zones take
 * two slots an hour from a month of days, and two arrays a day cost twice the cache misses (bench:promql).
 */
export interface DayBuckets {
  version: string
  slots: Float64Array
  /** Its 24 hours' sums, worked out from the slots on first use (PromQL's counters over zones, source.ts). */
  hours?: Float64Array
  /**
   * Its running sums by slot, which slots hold points, and its total, worked out on first use (PromQL's counters at
   * whole days' bucket ends, source.ts).
   */
  running?: { sums: Float64Array; counted: Uint8Array; total: number }
}

export class DayCache {
  /** By stat, then by day + size (a day is a multiple of 86,400 seconds, a size less than that). */
  private readonly stats = new Map<string, Map<number, DayBuckets & { used: number }>>()
  private count = 0
  private bytes = 0
  private clock = 0

  constructor(private budget: number) {}

  /** The budget in bytes; entries past a smaller one are dropped now. */
  resize(budget: number): void {
    this.budget = budget
    this.trim()
  }

  get size(): number {
    return this.count
  }

  get usedBytes(): number {
    return this.bytes
  }

  /** The day's buckets held for this stat and size (day: seconds at its UTC midnight), marked as just used. */
  get(statId: string, size: number, day: number): DayBuckets | undefined {
    const hit = this.stats.get(statId)?.get(day + size)
    if (hit) hit.used = ++this.clock
    return hit
  }

  put(statId: string, size: number, day: number, buckets: DayBuckets): void {
    if (!this.budget) return
    let days = this.stats.get(statId)
    if (!days) this.stats.set(statId, (days = new Map()))
    const old = days.get(day + size)
    if (old) this.bytes -= weight(old)
    else this.count++
    days.set(day + size, { ...buckets, used: ++this.clock })
    this.bytes += weight(buckets)
    if (this.bytes > this.budget) this.trim()
  }

  clear(): void {
    this.stats.clear()
    this.count = 0
    this.bytes = 0
  }

  /**
   * Drops the least recently used entries until a tenth of the budget is free (a read is marked by a counter rather
   * than by moving its entry: a read of a month of 100 series looks up 6,000 days).
   */
  private trim(): void {
    if (this.bytes <= this.budget) return
    const all: Array<[number, string, number, DayBuckets]> = []
    for (const [stat, days] of this.stats) for (const [key, d] of days) all.push([d.used, stat, key, d])
    all.sort((a, b) => a[0] - b[0])
    for (const [, stat, key, d] of all) {
      if (this.bytes <= this.budget * 0.9) break
      const days = this.stats.get(stat)!
      days.delete(key)
      if (!days.size) this.stats.delete(stat)
      this.count--
      this.bytes -= weight(d)
    }
  }
}

/**
 * Bytes an entry holds: its slots, half as much again for the running sums once made, and 400 for the hours, the
 * key, the object and the map's slot.
 */
const weight = (d: DayBuckets) => d.slots.byteLength * 1.5 + 400

/** The process' cache, read by rollupParts; the web and worker processes size it from ROLLUP_CACHE_MB at start. */
export const dayCache = new DayCache(64 * 1024 * 1024)
