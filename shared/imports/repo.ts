// Import rows (sql/0012_imports.sql): the summary the API answered, the accepted
// points packed for the job, and the job's progress.
import type { Db } from '../db.js'
import type { LineError } from './rows.js'
import type { ImportPlan, StatSummary } from './plan.js'

export type ImportStatus = 'queued' | 'running' | 'completed' | 'failed'

export interface ImportRow {
  id: string
  account_id: string
  status: ImportStatus
  format: string
  points_total: number
  points_accepted: number
  points_trimmed: number
  points_duplicate: number
  points_invalid: number
  points_done: number
  points_skipped: number
  errors_count: number
  errors: LineError[]
  stats: StatSummary[]
  error: string | null
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
}

const COLUMNS =
  'id, account_id, status, format, points_total, points_accepted, points_trimmed, points_duplicate, points_invalid, points_done, points_skipped, errors_count, errors, stats, error, created_at, started_at, finished_at'

/**
 * Records an import with its packed points; queued, or completed at once when nothing was accepted.
 * The payload travels as base64 both ways: postgres.js sends and reads bytea as hex, a third longer and
 * slower to write and parse on both sides (12 MB for 500,000 points).
 */
export async function insertImport(sql: Db, accountId: string, plan: ImportPlan, statIds: string[], payload: Buffer): Promise<ImportRow> {
  const done = plan.points_accepted === 0
  const [row] = await sql<ImportRow[]>`
    insert into imports (account_id, status, format, points_total, points_accepted, points_trimmed, points_duplicate, points_invalid,
      errors_count, errors, stats, stat_ids, payload, started_at, finished_at)
    values (${accountId}, ${done ? 'completed' : 'queued'}, ${plan.format}, ${plan.points_total}, ${plan.points_accepted}, ${plan.points_trimmed},
      ${plan.points_duplicate}, ${plan.points_invalid}, ${plan.errors_count}, ${sql.json(plan.errors as never)}, ${sql.json(plan.stats as never)},
      ${statIds}::uuid[], decode(${done ? null : payload.toString('base64')}, 'base64'), ${done ? new Date() : null}, ${done ? new Date() : null})
    returning ${sql.unsafe(COLUMNS)}`
  return row
}

/** One import of one account (another account's id is not found). */
export async function findImport(sql: Db, accountId: string, id: string): Promise<ImportRow | null> {
  const [row] = await sql<ImportRow[]>`select ${sql.unsafe(COLUMNS)} from imports where id = ${id} and account_id = ${accountId}`
  return row ?? null
}

export async function deleteImport(sql: Db, id: string): Promise<void> {
  await sql`delete from imports where id = ${id}`
}

/** What the job needs: the status, the stat ids and the packed points (null once completed). */
export async function loadImportWork(
  sql: Db,
  id: string,
): Promise<{ status: ImportStatus; stat_ids: string[]; payload: Buffer | null } | null> {
  const [row] = await sql<{ status: ImportStatus; stat_ids: string[]; payload: string | null }[]>`
    select status, stat_ids, encode(payload, 'base64') as payload from imports where id = ${id}`
  // PostgreSQL breaks base64 into lines; Buffer.from skips the line breaks.
  return row ? { ...row, payload: row.payload === null ? null : Buffer.from(row.payload, 'base64') } : null
}

export async function markRunning(sql: Db, id: string): Promise<void> {
  await sql`update imports set status = 'running', started_at = coalesce(started_at, now()), error = null where id = ${id}`
}

/** Progress after one batch; `skipped`: points of a freshly applied batch found already stored by ikey. */
export async function recordProgress(sql: Db, id: string, done: number, skipped: number): Promise<void> {
  await sql`update imports set points_done = greatest(points_done, ${done}), points_skipped = points_skipped + ${skipped} where id = ${id}`
}

export async function markCompleted(sql: Db, id: string): Promise<void> {
  await sql`update imports set status = 'completed', points_done = points_accepted, finished_at = now(), payload = null, error = null where id = ${id}`
}

export async function markFailed(sql: Db, id: string, error: string): Promise<void> {
  await sql`update imports set status = 'failed', finished_at = now(), error = ${error} where id = ${id} and status <> 'completed'`
}

/** The public JSON form (docs/decisions.md §15, plus the preview's summary). */
export function importJson(r: ImportRow) {
  return {
    id: r.id,
    status: r.status,
    format: r.format,
    points_total: r.points_total,
    points_done: r.points_done,
    points_accepted: r.points_accepted,
    points_trimmed: r.points_trimmed,
    points_duplicate: r.points_duplicate,
    points_invalid: r.points_invalid,
    points_skipped: r.points_skipped,
    progress: r.points_accepted ? Math.floor((100 * r.points_done) / r.points_accepted) : 100,
    errors_count: r.errors_count,
    error: r.error,
    created_at: r.created_at.toISOString(),
    started_at: r.started_at?.toISOString() ?? null,
    finished_at: r.finished_at?.toISOString() ?? null,
    stats: r.stats,
    errors: r.errors,
  }
}
