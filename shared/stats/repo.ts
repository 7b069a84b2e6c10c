// Stat rows. A stat is created by the first accepted write under its name;
// its kind is fixed there, under the unique (account_id, name) constraint, so
// two concurrent first writes of different kinds end with exactly one kind.
import type { Db, Sql, TxSql } from '../db.js'
import { parseStatName } from '../ingest/names.js'
import { seriesKey, type Tags } from '../ingest/tags.js'

export type Kind = 'counter' | 'gauge'

export interface Stat {
  id: string
  accountId: string
  name: string
  kind: Kind
  description: string | null
  /** Shown on axes and beside values ('ms', 'requests'); null: none given. */
  unit: string | null
  /** Which way is good news: colours the change figures. */
  higherIs: HigherIs
  createdAt: Date
  /** A tagged series' stat (docs/decisions.md §24); null on the stat itself, which is also its untagged series. */
  parentId: string | null
  /** A tagged series' tag set; null on the stat itself. */
  tags: Tags | null
}

export const HIGHER_IS = ['better', 'worse', 'neither'] as const
export type HigherIs = (typeof HIGHER_IS)[number]

export interface StatRow {
  id: string
  account_id: string
  name: string
  kind: Kind
  description: string | null
  unit: string | null
  higher_is: HigherIs
  created_at: Date
  parent_id: string | null
  tags: Tags | null
}

export const toStat = (r: StatRow): Stat => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  kind: r.kind,
  description: r.description,
  unit: r.unit,
  higherIs: r.higher_is,
  createdAt: r.created_at,
  parentId: r.parent_id,
  tags: r.tags,
})

/** A stat row's columns, as toStat reads them. */
export const STAT_COLUMNS = 'id, account_id, name, kind, description, unit, higher_is, created_at, parent_id, tags'

/** A stat by name (the stat itself, not one of its tagged series). */
export async function findStat(sql: Db, accountId: string, name: string): Promise<Stat | null> {
  const [row] = await sql<
    StatRow[]
  >`select ${sql.unsafe(STAT_COLUMNS)} from stats where account_id = ${accountId} and name = ${name} and parent_id is null`
  return row ? toStat(row) : null
}

export async function findStatsByName(sql: Db, accountId: string, names: string[]): Promise<Stat[]> {
  if (!names.length) return []
  const rows = await sql<StatRow[]>`
    select ${sql.unsafe(STAT_COLUMNS)} from stats where account_id = ${accountId} and name = any(${names}) and parent_id is null`
  return rows.map(toStat)
}

/** A series as a write names it: its stat's name and its tag set (none: the stat's untagged series). */
export interface SeriesRef {
  name: string
  tags?: Tags
  /** seriesKey(name, tags), when the caller holds it already (a point's): not built and hashed again per look-up. */
  series?: string
}

/** The existing series among `refs` (docs/decisions.md §24): untagged ones are stat rows, tagged ones their children. */
export async function findSeriesRows(sql: Db, accountId: string, refs: SeriesRef[]): Promise<Stat[]> {
  const plain = refs.filter((r) => !r.tags).map((r) => r.name)
  const tagged = refs.filter((r) => r.tags)
  const [a, b] = await Promise.all([
    findStatsByName(sql, accountId, plain),
    tagged.length
      ? sql<StatRow[]>`
      select ${sql.unsafe(STAT_COLUMNS.replace(/(\w+)/g, 's.$1'))} from stats s
      join unnest(${tagged.map((r) => r.name)}::text[], ${tagged.map((r) => JSON.stringify(r.tags))}::text[]) as u(name, tags)
        on s.name = u.name and s.tags = u.tags::jsonb
      where s.account_id = ${accountId} and s.parent_id is not null`.then((rows) => rows.map(toStat))
      : [],
  ])
  return [...a, ...b]
}

/** The most series (tag sets) one stat holds (docs/decisions.md §24). */
export const MAX_SERIES_PER_STAT = 1_000

export type Created = Map<string, { stat: Stat; created: boolean }>
/** Why createStats stored nothing: the plan's series count, or one stat's series limit (naming the stat). */
export type CreateRefusal = { limit: 'plan' } | { limit: 'series'; name: string }

class Refused extends Error {
  constructor(readonly refusal: CreateRefusal) {
    super('refused')
  }
}

/**
 * Creates the series that do not exist yet, all or none within the account's series limit (plans count
 * series: a tagged series each, and a stat's own row while it has no tagged series) and each stat's
 * MAX_SERIES_PER_STAT. A tagged series' stat is created with it when missing; every series of a stat takes
 * the stat's kind (a write of the other kind is then refused by the caller, as for a stat). Per-account
 * advisory lock: concurrent creations cannot both take the last free place. Existing series (created
 * concurrently) are returned as they are. Keys: seriesKey(name, tags).
 */
export async function createStats(
  sql: Sql,
  accountId: string,
  wanted: Array<{ name: string; kind: Kind; tags?: Tags }>,
  limit: number,
): Promise<Created | CreateRefusal> {
  try {
    return (await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtextextended(${accountId}, 7))`
      const out: Created = new Map()
      const names = [...new Set(wanted.map((w) => w.name))]
      const parents = new Map((await findStatsByName(tx, accountId, names)).map((s) => [s.name, s]))
      for (const s of await findSeriesRows(
        tx,
        accountId,
        wanted.filter((w) => w.tags),
      ))
        out.set(seriesKey(s.name, s.tags), { stat: s, created: false })
      for (const s of parents.values()) out.set(s.name, { stat: s, created: false })
      const missingParents = names.filter((n) => !parents.has(n)).map((n) => wanted.find((w) => w.name === n)!)
      let made = 0
      if (missingParents.length) {
        const rows = await tx<StatRow[]>`
          insert into stats (account_id, name, kind)
          select ${accountId}, name, kind from unnest(${missingParents.map((m) => m.name)}::text[], ${missingParents.map((m) => m.kind)}::text[]) as u(name, kind)
          returning ${tx.unsafe(STAT_COLUMNS)}`
        for (const r of rows) {
          const stat = toStat(r)
          parents.set(stat.name, stat)
          out.set(stat.name, { stat, created: true })
        }
        made += rows.length
      }
      const missingSeries = [
        ...new Map(wanted.filter((w) => w.tags && !out.has(seriesKey(w.name, w.tags))).map((w) => [seriesKey(w.name, w.tags), w])).values(),
      ]
      if (missingSeries.length) {
        const rows = await tx<StatRow[]>`
          insert into stats (account_id, name, kind, parent_id, tags)
          select ${accountId}, u.name, p.kind, p.id, u.tags::jsonb
          from unnest(${missingSeries.map((m) => m.name)}::text[], ${missingSeries.map((m) => JSON.stringify(m.tags))}::text[]) as u(name, tags)
          join stats p on p.account_id = ${accountId} and p.name = u.name and p.parent_id is null
          on conflict do nothing
          returning ${tx.unsafe(STAT_COLUMNS)}`
        for (const r of rows) out.set(seriesKey(r.name, r.tags), { stat: toStat(r), created: true })
        made += rows.length
        // Each stat's series, counted with those just added.
        const [full] = await tx<{ name: string }[]>`
          select p.name from stats p where p.id = any(${[...new Set(rows.map((r) => r.parent_id!))]}::uuid[])
            and (select count(*) from stats c where c.parent_id = p.id) > ${MAX_SERIES_PER_STAT} limit 1`
        if (full) throw new Refused({ limit: 'series', name: full.name })
      }
      if (made && (await countSeries(tx, accountId)) > limit) throw new Refused({ limit: 'plan' })
      return out
    })) as Created
  } catch (err) {
    if (err instanceof Refused) return err.refusal
    throw err
  }
}

/**
 * The account's series as plans count them (docs/decisions.md §24): each tagged series, and each stat's own
 * row while the stat has no tagged series (a stat written only with tags holds no untagged series).
 */
export async function countSeries(sql: Db, accountId: string): Promise<number> {
  const [{ n }] = await sql<{ n: number }[]>`
    select count(*)::int as n from stats s where s.account_id = ${accountId}
      and (s.parent_id is not null or not exists (select 1 from stats c where c.parent_id = s.id))`
  return n
}

/**
 * Removes stats and series this request created when their points could not be queued (nothing else can have
 * points there yet); a stat keeps itself while another request's series hangs under it.
 */
export async function dropUnusedStats(sql: Db, ids: string[]): Promise<void> {
  if (!ids.length) return
  const unused = sql`not exists (select 1 from points p where p.stat_id = s.id) and not exists (select 1 from rollup_pending r where r.stat_id = s.id)`
  await sql`delete from stats s where id = any(${ids}::uuid[]) and parent_id is not null and ${unused}`
  await sql`delete from stats s where id = any(${ids}::uuid[]) and parent_id is null and ${unused}
    and not exists (select 1 from stats c where c.parent_id = s.id)`
}

export interface StatListItem extends Stat {
  lastPointAt: Date | null
  /** Its series (docs/decisions.md §24): 1 for an untagged stat, else its tag sets (and its own row if it has points). */
  series: number
}

/** The account's stats (each once, its series folded in) with the time of their newest point, by name. */
export async function listStats(sql: Db, accountId: string): Promise<StatListItem[]> {
  const rows = await sql<(StatRow & { last_point_at: Date | null; series: number })[]>`
    select s.id, s.account_id, s.name, s.kind, s.description, s.unit, s.higher_is, s.created_at, s.parent_id, s.tags,
           (select count(*)::int from stats c where c.parent_id = s.id) as series,
           -- A day may hold several blocks (sql/0032), and a write block may be newer than every hot row.
           (select max(greatest((select max(ts) from points p where p.stat_id = x.id),
                    (select max(last_ts) from point_blocks b where b.stat_id = x.id
                       and b.day = (select max(day) from point_blocks d where d.stat_id = x.id))))
            from stats x where x.id = s.id or x.parent_id = s.id) as last_point_at
    from stats s where s.account_id = ${accountId} and s.parent_id is null order by s.name`
  return rows.map((r) => ({ ...toStat(r), lastPointAt: r.last_point_at, series: Math.max(1, r.series) }))
}

/** `stats`, each followed by its tagged series (docs/decisions.md §24) by tags, in one query. */
export async function withSeries(sql: Db, stats: Stat[]): Promise<Stat[]> {
  if (!stats.length) return stats
  const rows = await sql<StatRow[]>`
    select ${sql.unsafe(STAT_COLUMNS)} from stats where parent_id = any(${stats.map((s) => s.id)}::uuid[]) order by tags::text`
  if (!rows.length) return stats
  const byParent = new Map<string, Stat[]>()
  for (const r of rows) {
    const list = byParent.get(r.parent_id!) ?? []
    list.push(toStat(r))
    byParent.set(r.parent_id!, list)
  }
  return stats.flatMap((s) => [s, ...(byParent.get(s.id) ?? [])])
}

export async function findStatById(sql: Db, id: string): Promise<Stat | null> {
  const [row] = await sql<
    StatRow[]
  >`select id, account_id, name, kind, description, unit, higher_is, created_at, parent_id, tags from stats where id = ${id}`
  return row ? toStat(row) : null
}

/** Sets or clears (null) a stat's description, unit and which way is good; a field left undefined is kept. */
export async function describeStat(
  sql: Db,
  accountId: string,
  name: string,
  p: { description?: string | null; unit?: string | null; higherIs?: HigherIs },
): Promise<Stat | null> {
  const [row] = await sql<StatRow[]>`
    update stats set
      description = case when ${p.description !== undefined} then ${p.description ?? null}::text else description end,
      unit = case when ${p.unit !== undefined} then ${p.unit ?? null}::text else unit end,
      higher_is = coalesce(${p.higherIs ?? null}::text, higher_is)
    where account_id = ${accountId} and name = ${name} and parent_id is null
    returning id, account_id, name, kind, description, unit, higher_is, created_at, parent_id, tags`
  return row ? toStat(row) : null
}

/**
 * Deletes a stat's rows: the stat with its points, pending and folded rollups, share token and idempotency
 * records. A persist transaction holding the stat FOR KEY SHARE finishes first and its points go too; points
 * still queued carry the old id and are dropped by the persist worker. Run inside deleteStat's transaction
 * (shared/delete-stat.ts), which also takes the stat out of dashboards.
 */
export async function deleteStatRows(tx: TxSql, accountId: string, name: string): Promise<Stat | null> {
  // The stat and its tagged series (docs/decisions.md §24), which share its name.
  const rows = await tx<StatRow[]>`
    delete from stats where account_id = ${accountId} and name = ${name}
    returning ${tx.unsafe(STAT_COLUMNS)}`
  const row = rows.find((r) => r.parent_id === null)
  if (!row) return null
  const ids = rows.map((r) => r.id)
  await tx`delete from points where stat_id = any(${ids}::uuid[])`
  await tx`delete from point_blocks where stat_id = any(${ids}::uuid[])`
  await tx`delete from rollup_pending where stat_id = any(${ids}::uuid[])`
  return toStat(row)
}

/** Finds a stat from a name as it arrives in a URL, normalised the way writes store it. */
export async function findStatByRawName(sql: Db, accountId: string, raw: string): Promise<Stat | null> {
  const name = parseStatName(raw)
  return name.ok ? findStat(sql, accountId, name.value) : null
}

/**
 * How many points the stat holds and its oldest and newest (what a delete removes: backfilled history included),
 * its tagged series' with its own (docs/decisions.md §24).
 */
export async function pointExtent(sql: Db, statId: string): Promise<{ points: number; oldest: Date | null; newest: Date | null }> {
  const ids = sql`(select id from stats where id = ${statId} or parent_id = ${statId})`
  const [row] = await sql<{ points: number; oldest: Date | null; newest: Date | null }[]>`
    select h.n + b.n as points, least(h.oldest, b.oldest) as oldest, greatest(h.newest, b.newest) as newest
    from (select count(*)::float8 as n, min(ts) as oldest, max(ts) as newest from points where stat_id in ${ids}) h,
         (select coalesce(sum(n), 0)::float8 as n, min(first_ts) as oldest, max(last_ts) as newest from point_blocks where stat_id in ${ids}) b`
  return row
}

/** Units a file stated (the predecessor's statlist), given to the named stats that have none yet. */
export async function setUnitsWhereUnset(sql: Db, accountId: string, units: Map<string, string>): Promise<void> {
  if (!units.size) return
  await sql`
    update stats s set unit = u.unit from unnest(${[...units.keys()]}::text[], ${[...units.values()]}::text[]) as u(name, unit)
    where s.account_id = ${accountId} and s.name = u.name and s.unit is null and s.parent_id is null`
}
