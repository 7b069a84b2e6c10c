// A stat's series (docs/decisions.md §24): the stat row is its untagged series, and each tag set is a child row
// of stats (parent_id, tags) whose points, rollups, sketches and blocks are keyed by its own id like any stat's.
// Reads of the stat as a whole read all its series as one (read.ts's SeriesIds); a filter keeps the series whose
// tags hold every pair asked; a group-by reads one answer per value of a key.
// What other readers use (the Prometheus API among them): listSeries for a stat's series with their tags,
// readSeriesBuckets / readSeriesPoints for one series' points by its id.
import type { Db } from '../db.js'
import type { Tags } from '../ingest/tags.js'
import { bucketOf, mergeAggs, readBuckets, readSets, type Agg, type Bucket } from './read.js'
import type { Window } from './ranges.js'
import type { Kind, Stat } from './repo.js'

/** One series of a stat: its id (where its points are) and its tags (null: the stat's own, untagged, row). */
export interface Series {
  id: string
  tags: Tags | null
}

/** At most this many groups of a group-by read; the rest is one `other` group (docs/decisions.md §24). */
export const MAX_GROUPS = 50

/** Every series of `stat`: its own row first, then its tagged series by tags. */
export async function listSeries(sql: Db, stat: Pick<Stat, 'id'>): Promise<Series[]> {
  const rows = await sql<{ id: string; tags: Tags | null }[]>`
    select id, tags from stats where id = ${stat.id}
    union all
    (select id, tags from stats where parent_id = ${stat.id} order by tags::text)`
  return rows.map((r) => ({ id: r.id, tags: r.tags }))
}

/** The series of `stat` whose tags hold every pair of `filter` (all of them without one). */
export async function matchingSeries(sql: Db, stat: Pick<Stat, 'id'>, filter: Tags | undefined): Promise<Series[]> {
  if (!filter) return listSeries(sql, stat)
  const rows = await sql<{ id: string; tags: Tags }[]>`
    select id, tags from stats where parent_id = ${stat.id} and tags @> ${JSON.stringify(filter)}::text::jsonb order by tags::text`
  return rows.map((r) => ({ id: r.id, tags: r.tags }))
}

/** One series' buckets over a window, by its id (a stat's own id reads its untagged series alone). */
export function readSeriesBuckets(sql: Db, seriesId: string, kind: Kind, w: Window): Promise<Bucket[]> {
  return readBuckets(sql, seriesId, kind, w)
}

/** One series' raw points in [from, to), by its id, oldest first (hot rows and compacted blocks alike). */
export async function readSeriesPoints(sql: Db, seriesId: string, from: Date, to: Date): Promise<Array<{ ts: Date; value: number }>> {
  return sql<{ ts: Date; value: number }[]>`select ts, value from stat_points(${seriesId}, ${from}, ${to}) order by ts`
}

export interface Group {
  tags: Record<string, string>
  /** The rest past MAX_GROUPS, read as one. */
  other?: true
  points: Bucket[]
  /** The series read as this group. */
  ids: string[]
}

/**
 * `series` grouped by the value of `key` (a series without the key is left out), the groups with the most
 * observations in the window first; past MAX_GROUPS the rest is one group marked `other`. One read for all.
 */
export async function readGroups(sql: Db, kind: Kind, series: Series[], key: string, w: Window, max = MAX_GROUPS): Promise<Group[]> {
  return (await grouped(sql, kind, series, key, w, max, false)).groups
}

/**
 * The group-by read of a stat: its groups (as readGroups) and all of `series` as one (the answer's `points`, series
 * without the key included), from one statement: every series' rollups are scanned once, added up by group and
 * bucket and, in the same pass, by bucket alone; the rest past `max` is merged here from its groups.
 */
export async function readGrouped(
  sql: Db,
  kind: Kind,
  series: Series[],
  key: string,
  w: Window,
  max = MAX_GROUPS,
): Promise<{ points: Bucket[]; groups: Group[] }> {
  return grouped(sql, kind, series, key, w, max, true)
}

async function grouped(
  sql: Db,
  kind: Kind,
  series: Series[],
  key: string,
  w: Window,
  max: number,
  whole: boolean,
): Promise<{ points: Bucket[]; groups: Group[] }> {
  const byValue = new Map<string, string[]>()
  const keyless: string[] = []
  for (const s of series) {
    const v = s.tags?.[key]
    if (v === undefined) {
      keyless.push(s.id)
      continue
    }
    let ids = byValue.get(v)
    if (!ids) byValue.set(v, (ids = []))
    ids.push(s.id)
  }
  if (!byValue.size && !(whole && keyless.length)) return { points: [], groups: [] }
  const values = [...byValue.keys()]
  // The series without the key are read only into the whole (their set's own buckets are not a group).
  const sets = values.map((v) => byValue.get(v)!)
  const read = await readSets(sql, whole && keyless.length ? [...sets, keyless] : sets, w, whole)
  const groups = values.map((v, i) => {
    const aggs = read.sets[i]
    return { value: v, aggs, volume: aggs.reduce((n, b) => n + b.n, 0), ids: sets[i] }
  })
  groups.sort((a, b) => b.volume - a.volume || (a.value < b.value ? -1 : 1))
  const asBuckets = (aggs: readonly Agg[]) => aggs.map((a) => bucketOf(kind, a))
  const top: Group[] = groups.slice(0, max).map((g) => ({ tags: { [key]: g.value }, points: asBuckets(g.aggs), ids: g.ids }))
  const rest = groups.slice(max)
  if (rest.length)
    top.push({ tags: {}, other: true, points: asBuckets(mergeAggs(rest.map((g) => g.aggs))), ids: rest.flatMap((g) => g.ids) })
  return { points: whole ? asBuckets(read.total) : [], groups: top }
}

/** The series of each stat (its own row first, then its tagged series by tags): child rows of `stats` (sql/0037), in one statement. */
export async function seriesOf(sql: Db, ids: readonly string[]): Promise<Map<string, Array<{ id: string; tags: Tags | null }>>> {
  const out = new Map(ids.map((id) => [id, [{ id, tags: null as Tags | null }]]))
  if (!ids.length) return out
  const rows = await sql<{ id: string; parent_id: string; tags: Tags }[]>`
    select id, parent_id, tags from stats where parent_id = any(${ids as string[]}::uuid[]) order by parent_id, tags::text`
  for (const r of rows) out.get(r.parent_id)?.push({ id: r.id, tags: r.tags })
  return out
}

/** The ids a whole read of each stat covers (seriesOf's, without their tags). */
export async function seriesIdsOf(sql: Db, stats: ReadonlyArray<Pick<Stat, 'id'>>): Promise<Map<string, string[]>> {
  const series = await seriesOf(
    sql,
    stats.map((s) => s.id),
  )
  return new Map([...series].map(([id, list]) => [id, list.map((x) => x.id)]))
}

/** A stat's tag keys, each with its values and how many series hold each (docs/decisions.md §24's /tags). */
export async function tagSummary(
  sql: Db,
  stat: Pick<Stat, 'id'>,
): Promise<Array<{ key: string; values: Array<{ value: string; series: number }> }>> {
  const rows = await sql<{ key: string; value: string; series: number }[]>`
    select t.key, t.value, count(*)::int as series from stats s, jsonb_each_text(s.tags) as t(key, value)
    where s.parent_id = ${stat.id} group by 1, 2 order by 1, 2`
  const out: Array<{ key: string; values: Array<{ value: string; series: number }> }> = []
  for (const r of rows) {
    if (out[out.length - 1]?.key !== r.key) out.push({ key: r.key, values: [] })
    out[out.length - 1].values.push({ value: r.value, series: r.series })
  }
  return out
}
