// What a dashboard page draws, in one read: each card's window (its own range, else the dashboard's)
// and its stats' buckets. Cards sharing a window are read together (readBucketsMany: one query per
// window, not one per stat), so a dashboard of 12 cards of 3 stats over one range is one query.
import type { Db } from '../db.js'
import { planOf, type PlanName } from '../plans.js'
import { readBucketsMany, type Bucket } from '../stats/read.js'
import { clampToRetention, resolveWindow, windowJson, type Window } from '../stats/ranges.js'
import { findStatsByName, type Stat } from '../stats/repo.js'
import type { Dashboard } from './repo.js'

export interface CardData {
  id: string
  range: ReturnType<typeof windowJson>
  series: Array<{ name: string; kind: Stat['kind']; unit: string | null; points: Bucket[] }>
}

export async function dashboardData(sql: Db, d: Dashboard, plan: PlanName, range: string | undefined, now: Date): Promise<CardData[]> {
  const stats = new Map((await findStatsByName(sql, d.accountId, [...new Set(d.cards.flatMap((c) => c.stats))])).map((s) => [s.name, s]))
  const windows = new Map<string, Window>()
  const windowOf = (r: string) => {
    if (!windows.has(r)) windows.set(r, clampToRetention(resolveWindow({ range: r }, now), planOf(plan).retentionDays, now))
    return windows.get(r)!
  }
  const cardRange = (c: Dashboard['cards'][number]) => c.range ?? range ?? d.range
  const byRange = new Map<string, Map<string, Bucket[]>>()
  for (const r of new Set(d.cards.map(cardRange))) {
    const wanted = [...new Set(d.cards.filter((c) => cardRange(c) === r).flatMap((c) => c.stats))].flatMap((n) => stats.get(n) ?? [])
    byRange.set(r, await readBucketsMany(sql, wanted, windowOf(r)))
  }
  return d.cards.map((c) => {
    const r = cardRange(c)
    return {
      id: c.id,
      range: windowJson(windowOf(r)),
      // A stat deleted since the card was read is simply not drawn.
      series: c.stats.flatMap((n) => {
        const s = stats.get(n)
        return s ? [{ name: s.name, kind: s.kind, unit: s.unit, points: byRange.get(r)!.get(s.id) ?? [] }] : []
      }),
    }
  })
}
