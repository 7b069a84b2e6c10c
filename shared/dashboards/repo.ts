// Dashboards (docs/decisions.md §17): every query scoped to the caller's account. A card names its
// stats; they must be the account's stats when the card is saved (a typo would draw an empty chart
// forever), and deleting a stat takes it out of the cards that held it (removeStatFromDashboards).
import { randomUUID } from 'node:crypto'
import type { Db, Sql, TxSql } from '../db.js'
import { invalid, notFound } from '../errors.js'
import { parseFilter, type Tags } from '../ingest/tags.js'
import { findStatsByName } from '../stats/repo.js'
import type { CardInputT, CreateDashboard, PatchDashboard } from './schema.js'

export interface Card {
  id: string
  title: string | null
  stats: string[]
  range: string | null
  /** Tag filter and group-by key (docs/decisions.md §24); absent on cards stored before them. */
  filter?: Tags | null
  groupBy?: string | null
}

/** A stored filter as the read's `filter=` text (keys sorted): host:web1,region:eu. */
const filterText = (f: Tags | null | undefined) =>
  f
    ? Object.keys(f)
        .map((k) => `${k}:${f[k]}`)
        .join(',')
    : null

export interface Dashboard {
  id: string
  accountId: string
  name: string
  range: string
  cards: Card[]
  createdAt: Date
  updatedAt: Date
}

interface Row {
  id: string
  account_id: string
  name: string
  range: string
  cards: Card[]
  created_at: Date
  updated_at: Date
}

const toDashboard = (r: Row): Dashboard => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  range: r.range,
  cards: r.cards,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})
const COLUMNS = 'id, account_id, name, range, cards, created_at, updated_at'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function dashboardJson(d: Dashboard) {
  return {
    id: d.id,
    name: d.name,
    range: d.range,
    cards: d.cards.map((c) => ({
      id: c.id,
      title: c.title ?? c.stats.join(', '),
      stats: c.stats,
      range: c.range,
      filter: filterText(c.filter),
      group_by: c.groupBy ?? null,
    })),
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  }
}

export async function listDashboards(sql: Db, accountId: string): Promise<Dashboard[]> {
  const rows = await sql<Row[]>`select ${sql.unsafe(COLUMNS)} from dashboards where account_id = ${accountId} order by created_at, id`
  return rows.map(toDashboard)
}

/** The account's dashboard, or the 404 another account's id (or a malformed one) answers. */
export async function getDashboard(sql: Db, accountId: string, id: string, lock = false): Promise<Dashboard> {
  if (!UUID.test(id)) throw notFound('dashboard', 'dashboard_not_found')
  const [row] = lock
    ? await sql<Row[]>`select ${sql.unsafe(COLUMNS)} from dashboards where account_id = ${accountId} and id = ${id} for update`
    : await sql<Row[]>`select ${sql.unsafe(COLUMNS)} from dashboards where account_id = ${accountId} and id = ${id}`
  if (!row) throw notFound('dashboard', 'dashboard_not_found')
  return toDashboard(row)
}

/**
 * Cards as stored: every named stat must be the account's (400 naming the first that is not, with its
 * card), a kept card's id must be one of this dashboard's, and new cards get an id.
 */
async function checkedCards(sql: Db, accountId: string, cards: CardInputT[], existing: Card[] | null): Promise<Card[]> {
  const names = [...new Set(cards.flatMap((c) => c.stats))]
  const known = new Set((await findStatsByName(sql, accountId, names)).map((s) => s.name))
  const ids = new Set(existing?.map((c) => c.id) ?? [])
  const seen = new Set<string>()
  return cards.map((c, i) => {
    const unknown = c.stats.find((s) => !known.has(s))
    if (unknown !== undefined) {
      throw invalid('unknown_stat', `cards[${i}].stats: no stat named "${unknown}" in this account`, {
        errors: [{ path: `body.cards.${i}.stats`, message: `no stat named "${unknown}"` }],
      })
    }
    if (c.id !== undefined) {
      if (existing === null) throw invalid('validation_failed', `cards[${i}].id: a new dashboard's cards have no id yet (leave it out)`)
      if (!ids.has(c.id)) throw invalid('unknown_card', `cards[${i}].id: not a card of this dashboard (leave it out for a new card)`)
      if (seen.has(c.id)) throw invalid('validation_failed', `cards[${i}].id: the same card is listed twice`)
      seen.add(c.id)
    }
    const filter = c.filter ? parseFilter(c.filter) : null
    if (filter && !filter.ok)
      throw invalid(filter.code, `cards[${i}].filter: ${filter.message}`, {
        errors: [{ path: `body.cards.${i}.filter`, message: filter.message }],
      })
    // A title that is only the default (the names joined, as a read gives it back) is not kept: it follows the stats.
    return {
      id: c.id ?? randomUUID(),
      title: c.title && c.title !== c.stats.join(', ') ? c.title : null,
      stats: c.stats,
      range: c.range ?? null,
      filter: filter?.value ?? null,
      groupBy: c.group_by ?? null,
    }
  })
}

export async function createDashboard(sql: Sql, accountId: string, body: CreateDashboard): Promise<Dashboard> {
  const cards = await checkedCards(sql, accountId, body.cards, null)
  const [row] = await sql<Row[]>`
    insert into dashboards (account_id, name, range, cards) values (${accountId}, ${body.name}, ${body.range ?? '24h'}, ${sql.json(cards as never)})
    returning ${sql.unsafe(COLUMNS)}`
  return toDashboard(row)
}

/** Renames, sets the range and/or replaces the cards, under a row lock so two edits do not interleave. */
export async function patchDashboard(sql: Sql, accountId: string, id: string, body: PatchDashboard): Promise<Dashboard> {
  return sql.begin(async (tx: TxSql) => {
    const d = await getDashboard(tx, accountId, id, true)
    const cards = body.cards ? await checkedCards(tx, accountId, body.cards, d.cards) : d.cards
    const [row] = await tx<Row[]>`
      update dashboards set name = ${body.name ?? d.name}, range = ${body.range ?? d.range}, cards = ${tx.json(cards as never)}, updated_at = now()
      where id = ${id} and account_id = ${accountId} returning ${tx.unsafe(COLUMNS)}`
    return toDashboard(row)
  }) as Promise<Dashboard>
}

export async function deleteDashboard(sql: Db, accountId: string, id: string): Promise<void> {
  if (!UUID.test(id)) throw notFound('dashboard', 'dashboard_not_found')
  const rows = await sql`delete from dashboards where account_id = ${accountId} and id = ${id} returning id`
  if (!rows.length) throw notFound('dashboard', 'dashboard_not_found')
}

/**
 * A deleted stat leaves the cards that held it; a card left with no stat goes (decision 17). The containment
 * filter is a text parameter cast twice, not sql.json: a stat's delete also runs on the TimescaleDB test's
 * PGlite driver, which has no json helper, and a string cast straight to jsonb would be sent as a JSON string.
 */
export async function removeStatFromDashboards(sql: Db, accountId: string, name: string): Promise<void> {
  await sql`
    update dashboards d set cards = coalesce((
      select jsonb_agg(case when c ? 'stats' then jsonb_set(c, '{stats}', (c->'stats') - ${name}::text) else c end order by i)
      from jsonb_array_elements(d.cards) with ordinality as e(c, i)
      where jsonb_array_length((c->'stats') - ${name}::text) > 0
    ), '[]'::jsonb), updated_at = now()
    where d.account_id = ${accountId} and d.cards @> ${JSON.stringify([{ stats: [name] }])}::text::jsonb`
}
