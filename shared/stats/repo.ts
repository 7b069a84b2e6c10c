// Stat rows. A stat is created by the first accepted write under its name;
// its kind is fixed there, under the unique (account_id, name) constraint, so
// two concurrent first writes of different kinds end with exactly one kind.
import type { Db, Sql, TxSql } from '../db.js'
import { parseStatName } from '../ingest/names.js'

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
}

export const HIGHER_IS = ['better', 'worse', 'neither'] as const
export type HigherIs = (typeof HIGHER_IS)[number]

interface StatRow {
  id: string
  account_id: string
  name: string
  kind: Kind
  description: string | null
  unit: string | null
  higher_is: HigherIs
  created_at: Date
}

const toStat = (r: StatRow): Stat => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  kind: r.kind,
  description: r.description,
  unit: r.unit,
  higherIs: r.higher_is,
  createdAt: r.created_at,
})

export async function findStat(sql: Db, accountId: string, name: string): Promise<Stat | null> {
  const [row] = await sql<
    StatRow[]
  >`select id, account_id, name, kind, description, unit, higher_is, created_at from stats where account_id = ${accountId} and name = ${name}`
  return row ? toStat(row) : null
}

export async function findStatsByName(sql: Db, accountId: string, names: string[]): Promise<Stat[]> {
  if (!names.length) return []
  const rows = await sql<StatRow[]>`
    select id, account_id, name, kind, description, unit, higher_is, created_at from stats where account_id = ${accountId} and name = any(${names})`
  return rows.map(toStat)
}

/**
 * Creates the stats that do not exist yet, all or none within the account's
 * stat limit. Per-account advisory lock: concurrent creations cannot both
 * take the last free place. Existing stats (created concurrently) are returned as they are.
 */
export async function createStats(
  sql: Sql,
  accountId: string,
  wanted: Array<{ name: string; kind: Kind }>,
  limit: number,
): Promise<Map<string, { stat: Stat; created: boolean }> | null> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${accountId}, 7))`
    const existing = new Map(
      (
        await findStatsByName(
          tx,
          accountId,
          wanted.map((w) => w.name),
        )
      ).map((s) => [s.name, s]),
    )
    const missing = wanted.filter((w) => !existing.has(w.name))
    const out = new Map<string, { stat: Stat; created: boolean }>()
    for (const s of existing.values()) out.set(s.name, { stat: s, created: false })
    if (!missing.length) return out
    const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from stats where account_id = ${accountId}`
    if (n + missing.length > limit) return null
    const rows = await tx<StatRow[]>`
      insert into stats (account_id, name, kind)
      select ${accountId}, name, kind from unnest(${missing.map((m) => m.name)}::text[], ${missing.map((m) => m.kind)}::text[]) as u(name, kind)
      returning id, account_id, name, kind, description, unit, higher_is, created_at`
    for (const r of rows) out.set(r.name, { stat: toStat(r), created: true })
    return out
  }) as Promise<Map<string, { stat: Stat; created: boolean }> | null>
}

/** Removes stats this request created when their points could not be queued (nothing else can have points there yet). */
export async function dropUnusedStats(sql: Db, ids: string[]): Promise<void> {
  if (!ids.length) return
  await sql`delete from stats s where id = any(${ids}::uuid[]) and not exists (select 1 from points p where p.stat_id = s.id)
    and not exists (select 1 from rollup_pending r where r.stat_id = s.id)`
}

export interface StatListItem extends Stat {
  lastPointAt: Date | null
}

/** The account's stats with the time of their newest point, by name. */
export async function listStats(sql: Db, accountId: string): Promise<StatListItem[]> {
  const rows = await sql<(StatRow & { last_point_at: Date | null })[]>`
    select s.id, s.account_id, s.name, s.kind, s.description, s.unit, s.higher_is, s.created_at,
           -- A day may hold several blocks (sql/0032), and a write block may be newer than every hot row.
           greatest((select max(ts) from points p where p.stat_id = s.id),
                    (select max(last_ts) from point_blocks b where b.stat_id = s.id
                       and b.day = (select max(day) from point_blocks d where d.stat_id = s.id))) as last_point_at
    from stats s where s.account_id = ${accountId} order by s.name`
  return rows.map((r) => ({ ...toStat(r), lastPointAt: r.last_point_at }))
}

export async function findStatById(sql: Db, id: string): Promise<Stat | null> {
  const [row] = await sql<
    StatRow[]
  >`select id, account_id, name, kind, description, unit, higher_is, created_at from stats where id = ${id}`
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
    where account_id = ${accountId} and name = ${name}
    returning id, account_id, name, kind, description, unit, higher_is, created_at`
  return row ? toStat(row) : null
}

/**
 * Deletes a stat's rows: the stat with its points, pending and folded rollups, share token and idempotency
 * records. A persist transaction holding the stat FOR KEY SHARE finishes first and its points go too; points
 * still queued carry the old id and are dropped by the persist worker. Run inside deleteStat's transaction
 * (shared/delete-stat.ts), which also takes the stat out of dashboards.
 */
export async function deleteStatRows(tx: TxSql, accountId: string, name: string): Promise<Stat | null> {
  const [row] = await tx<StatRow[]>`
    delete from stats where account_id = ${accountId} and name = ${name}
    returning id, account_id, name, kind, description, unit, higher_is, created_at`
  if (!row) return null
  await tx`delete from points where stat_id = ${row.id}`
  await tx`delete from point_blocks where stat_id = ${row.id}`
  await tx`delete from rollup_pending where stat_id = ${row.id}`
  return toStat(row)
}

/** Finds a stat from a name as it arrives in a URL, normalised the way writes store it. */
export async function findStatByRawName(sql: Db, accountId: string, raw: string): Promise<Stat | null> {
  const name = parseStatName(raw)
  return name.ok ? findStat(sql, accountId, name.value) : null
}

/** How many points the stat holds and its oldest and newest (what a delete removes: backfilled history included). */
export async function pointExtent(sql: Db, statId: string): Promise<{ points: number; oldest: Date | null; newest: Date | null }> {
  const [row] = await sql<{ points: number; oldest: Date | null; newest: Date | null }[]>`
    select h.n + b.n as points, least(h.oldest, b.oldest) as oldest, greatest(h.newest, b.newest) as newest
    from (select count(*)::float8 as n, min(ts) as oldest, max(ts) as newest from points where stat_id = ${statId}) h,
         (select coalesce(sum(n), 0)::float8 as n, min(first_ts) as oldest, max(last_ts) as newest from point_blocks where stat_id = ${statId}) b`
  return row
}

/** Units a file stated (the predecessor's statlist), given to the named stats that have none yet. */
export async function setUnitsWhereUnset(sql: Db, accountId: string, units: Map<string, string>): Promise<void> {
  if (!units.size) return
  await sql`
    update stats s set unit = u.unit from unnest(${[...units.keys()]}::text[], ${[...units.values()]}::text[]) as u(name, unit)
    where s.account_id = ${accountId} and s.name = u.name and s.unit is null`
}
