// Export rows stream from PostgreSQL through a cursor, one stat at a time in
// name order, so memory stays flat however many rows there are.
import type { Sql } from '../db.js'
import type { Stat } from '../stats/repo.js'
import type { ExportWindow } from './window.js'

const CURSOR_ROWS = 5_000

interface Row {
  t: string
  value: number
}

async function* rowsOf(sql: Sql, stat: Stat, w: ExportWindow): AsyncGenerator<Row[]> {
  yield* sql<Row[]>`
    select extract(epoch from ts)::bigint::text as t, value from points
    where stat_id = ${stat.id} and ts >= ${w.from} and ts <= ${w.to} order by ts`.cursor(CURSOR_ROWS)
}

/** RFC 4180 quoting, for fields that may hold commas, quotes or line breaks. */
export function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export const CSV_HEADER = 'stat,kind,timestamp,iso_time,value\n'

/** CSV: header, one row per observation, then `# requested_range=… applied_from=… applied_to=…`. */
export async function* exportCsv(sql: Sql, stats: Stat[], w: ExportWindow): AsyncGenerator<string> {
  yield CSV_HEADER
  for (const stat of stats) {
    const prefix = `${csvField(stat.name)},${stat.kind},`
    for await (const rows of rowsOf(sql, stat, w)) {
      let chunk = ''
      for (const r of rows) chunk += `${prefix}${r.t},${new Date(Number(r.t) * 1000).toISOString()},${r.value}\n`
      yield chunk
    }
  }
  yield `# requested_range=${w.requested} applied_from=${w.from.toISOString()} applied_to=${w.to.toISOString()}\n`
}

/** JSON: the window fields, then `stats: [{name, kind, points: [{t, value}]}]`, written as it is read. */
export async function* exportJson(sql: Sql, stats: Stat[], w: ExportWindow): AsyncGenerator<string> {
  const head = {
    requested_range: w.requested, applied_from: w.from.toISOString(), applied_to: w.to.toISOString(),
    retention_days: w.retentionDays, range_clamped_by_retention: w.clamped,
  }
  yield `${JSON.stringify(head).slice(0, -1)},"stats":[`
  for (const [i, stat] of stats.entries()) {
    yield `${i ? ',' : ''}{"name":${JSON.stringify(stat.name)},"kind":"${stat.kind}","points":[`
    let first = true
    for await (const rows of rowsOf(sql, stat, w)) {
      let chunk = ''
      for (const r of rows) {
        chunk += `${first ? '' : ','}{"t":${r.t},"value":${r.value}}`
        first = false
      }
      yield chunk
    }
    yield ']}'
  }
  yield ']}\n'
}

/** Whether the stats hold points older than the window (so "all history" was cut by retention). */
export async function hasOlderPoints(sql: Sql, stats: Stat[], before: Date): Promise<boolean> {
  if (!stats.length) return false
  const [row] = await sql<{ found: boolean }[]>`
    select exists (select 1 from points where stat_id = any(${stats.map((s) => s.id)}::uuid[]) and ts < ${before}) as found`
  return row.found
}
