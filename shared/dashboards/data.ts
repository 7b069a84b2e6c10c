// What a dashboard page draws, in one read: each card's window (its own range, else the dashboard's)
// and its stats' buckets. Cards sharing a window are read together (readBucketsMany: one query per
// window, not one per stat), so a dashboard of 12 cards of 3 stats over one range is one query.
import type { Db } from '../db.js'
import { planOf, type PlanName } from '../plans.js'
import { readBuckets, readBucketsMany, type Bucket } from '../stats/read.js'
import { matchingSeries, readGroups, seriesIdsOf } from '../stats/series.js'
import { clampToRetention, resolveWindow, windowJson, type Window } from '../stats/ranges.js'
import { findStatsByName, type Stat } from '../stats/repo.js'
import type { Dashboard } from './repo.js'

export interface CardData {
  id: string
  range: ReturnType<typeof windowJson>
  series: Array<{ name: string; kind: Stat['kind']; unit: string | null; tags?: Record<string, string>; other?: true; points: Bucket[] }>
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
  const tagged = (c: Dashboard['cards'][number]) => Boolean(c.filter || c.groupBy)
  for (const r of new Set(d.cards.map(cardRange))) {
    const wanted = [...new Set(d.cards.filter((c) => cardRange(c) === r && !tagged(c)).flatMap((c) => c.stats))].flatMap(
      (n) => stats.get(n) ?? [],
    )
    // A stat drawn as a whole is all its series read as one (docs/decisions.md §24).
    const series = await seriesIdsOf(sql, wanted)
    byRange.set(
      r,
      await readBucketsMany(
        sql,
        wanted.map((s) => ({ id: s.id, kind: s.kind, series: series.get(s.id) })),
        windowOf(r),
      ),
    )
  }
  // A card with a filter or group-by reads its stats' series as a stat read does (docs/decisions.md §24).
  const taggedSeries = new Map<string, CardData['series']>()
  for (const c of d.cards.filter(tagged)) {
    const w = windowOf(cardRange(c))
    const out: CardData['series'] = []
    for (const n of c.stats) {
      const s = stats.get(n)
      if (!s) continue
      const series = await matchingSeries(sql, s, c.filter ?? undefined)
      const base = { name: s.name, kind: s.kind, unit: s.unit }
      if (c.groupBy) {
        for (const g of await readGroups(sql, s.kind, series, c.groupBy, w))
          out.push({ ...base, tags: g.tags, ...(g.other ? { other: true as const } : {}), points: g.points })
      } else
        out.push({
          ...base,
          points: series.length
            ? await readBuckets(
                sql,
                series.map((x) => x.id),
                s.kind,
                w,
              )
            : [],
        })
    }
    taggedSeries.set(c.id, out)
  }
  return d.cards.map((c) => {
    const r = cardRange(c)
    if (tagged(c)) return { id: c.id, range: windowJson(windowOf(r)), series: taggedSeries.get(c.id)! }
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
