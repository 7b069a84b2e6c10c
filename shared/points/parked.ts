// Dead letters of the persist worker (sql/0007_parked_points.sql): points
// PostgreSQL refused on their data, parked with the reason so that one bad
// point never costs the points beside it, and an operator can see what was
// refused (the worker's log line, the health detail, `npm run cli -- points:parked`).
import type { Db, Sql } from '../db.js'
import type { QueuedPoint } from '../jobs.js'

/** A point PostgreSQL refused, and why. */
export interface ParkedPoint {
  point: QueuedPoint
  /** SQLSTATE of the refusal. */
  code: string | undefined
  reason: string
}

/**
 * True when PostgreSQL refused a statement because of the values it was given
 * (class 22 data exception, 23 integrity constraint, 54 program limit), so
 * that the same values will always be refused: retrying cannot help, isolating
 * them can. A lost connection, a timeout or a shutdown is not a data error.
 */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^(22|23|54)[0-9A-Z]{3}$/.test(code)
}

// JSON text escapes NUL and lone surrogates, so the record of a refused point can itself be stored.
const storable = (text: string) => JSON.stringify(text).slice(1, -1)

/** Records refused points in the caller's transaction (the same one that records their batch as applied). */
export async function insertParked(sql: Db, batchId: string, parked: ParkedPoint[]): Promise<void> {
  if (!parked.length) return
  await sql`
    insert into parked_points (batch_id, stat_id, point, code, reason)
    select ${storable(batchId)}, u.stat_id, u.point, u.code, u.reason
    from unnest(${parked.map((p) => p.point[0])}::uuid[], ${parked.map((p) => JSON.stringify(p.point))}::text[],
      ${parked.map((p) => p.code ?? null) as string[]}::text[], ${parked.map((p) => storable(p.reason))}::text[]) as u(stat_id, point, code, reason)`
}

export interface ParkedRow {
  id: number
  batch_id: string
  stat_id: string
  stat_name: string | null
  account_email: string | null
  point: QueuedPoint
  code: string | null
  reason: string
  parked_at: string
}

/** The newest parked points first, with the stat and account they were written to (for the operator CLI). */
export async function listParked(sql: Sql, limit = 100): Promise<ParkedRow[]> {
  const rows = await sql<Array<Omit<ParkedRow, 'point' | 'parked_at'> & { point: string; parked_at: Date }>>`
    select p.id::int as id, p.batch_id, p.stat_id, s.name as stat_name, a.email as account_email, p.point, p.code, p.reason, p.parked_at
    from parked_points p left join stats s on s.id = p.stat_id left join accounts a on a.id = s.account_id
    order by p.id desc limit ${limit}`
  return rows.map((r) => ({ ...r, point: JSON.parse(r.point) as QueuedPoint, parked_at: r.parked_at.toISOString() }))
}

/** How many points are parked, and the newest one's time: a detail of GET /api/v1/health (it never fails the check). */
export async function parkedSummary(sql: Sql): Promise<{ count: number; last_parked_at: string | null }> {
  const [r] = await sql<{ count: number; last: Date | null }[]>`select count(*)::int as count, max(parked_at) as last from parked_points`
  return { count: r.count, last_parked_at: r.last?.toISOString() ?? null }
}
