// Export rows are read from PostgreSQL in pages, one stat at a time in name
// order, so memory stays flat however many rows there are. Each page is a
// statement of its own, keyed on the last timestamp sent: a single streamed
// statement (a cursor) stays one statement until it ends, so an export longer
// than the connection's statement timeout was cut off half-way (issue 24,
// item 10). A page is a short index range scan on (stat_id, ts) whatever the
// export's size.
import type { Sql } from '../db.js'
import type { Stat } from '../stats/repo.js'
import type { ExportWindow } from './window.js'

export const PAGE_ROWS = 10_000

interface Row {
  /**
   * The exact time in microseconds since the epoch (int8, as text): the key of the next page, and the
   * export's whole-second `t`. A timestamptz parameter goes through a JS Date, which keeps milliseconds
   * only: a page ending on sub-millisecond times would start over for ever.
   */
  us: string
  value: number
}

/** Whole seconds as exports always gave them (PostgreSQL's rounding of the epoch: half away from zero). */
export function secondsOf(us: string): number {
  const s = Number(us) / 1e6
  return s < 0 ? -Math.round(-s) : Math.round(s)
}

/**
 * One stat's rows in the window, by time, page by page. Points are append-only
 * and several may share a timestamp, so a full page gives back the rows of its
 * last timestamp and the next page starts at that timestamp inclusive; a page
 * that is one timestamp throughout is followed by every row of that timestamp.
 */
export async function* pagedRows(sql: Sql, stat: Stat, w: ExportWindow, pageRows = PAGE_ROWS): AsyncGenerator<Row[]> {
  const at = (us: string) => sql`'epoch'::timestamptz + ${us}::int8 * interval '1 microsecond'`
  let after: { us: string; inclusive: boolean } | undefined
  for (;;) {
    const lower = after === undefined ? sql`ts >= ${w.from}` : after.inclusive ? sql`ts >= ${at(after.us)}` : sql`ts > ${at(after.us)}`
    const rows = await sql<Row[]>`
      select (extract(epoch from ts) * 1000000)::int8 as us, value from points
      where stat_id = ${stat.id} and ${lower} and ts <= ${w.to} order by ts limit ${pageRows}`
    if (rows.length < pageRows) {
      if (rows.length) yield rows
      return
    }
    const last = rows[rows.length - 1].us
    let cut = rows.length - 1
    while (cut > 0 && rows[cut - 1].us === last) cut--
    if (cut > 0) {
      // A plain array: slicing postgres.js' result (an Array subclass) goes through its own constructor.
      yield Array.from(rows).slice(0, cut)
      after = { us: last, inclusive: true }
    } else {
      yield await sql<Row[]>`
        select (extract(epoch from ts) * 1000000)::int8 as us, value from points where stat_id = ${stat.id} and ts = ${at(last)}`
      after = { us: last, inclusive: false }
    }
  }
}

/** RFC 4180 quoting, for fields that may hold commas, quotes or line breaks. */
export function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export const CSV_HEADER = 'stat,kind,timestamp,iso_time,value\n'

/** CSV: header, one row per observation, then `# requested_range=… applied_from=… applied_to=…`. */
export async function* exportCsv(sql: Sql, stats: Stat[], w: ExportWindow, pageRows = PAGE_ROWS): AsyncGenerator<string> {
  yield CSV_HEADER
  for (const stat of stats) {
    const prefix = `${csvField(stat.name)},${stat.kind},`
    for await (const rows of pagedRows(sql, stat, w, pageRows)) {
      let chunk = ''
      for (const r of rows) {
        const t = secondsOf(r.us)
        chunk += `${prefix}${t},${new Date(t * 1000).toISOString()},${r.value}\n`
      }
      yield chunk
    }
  }
  yield `# requested_range=${w.requested} applied_from=${w.from.toISOString()} applied_to=${w.to.toISOString()}\n`
}

/** JSON: the window fields, then `stats: [{name, kind, points: [{t, value}]}]`, written as it is read. */
export async function* exportJson(sql: Sql, stats: Stat[], w: ExportWindow, pageRows = PAGE_ROWS): AsyncGenerator<string> {
  const head = {
    requested_range: w.requested, applied_from: w.from.toISOString(), applied_to: w.to.toISOString(),
    retention_days: w.retentionDays, range_clamped_by_retention: w.clamped,
  }
  yield `${JSON.stringify(head).slice(0, -1)},"stats":[`
  for (const [i, stat] of stats.entries()) {
    yield `${i ? ',' : ''}{"name":${JSON.stringify(stat.name)},"kind":"${stat.kind}","points":[`
    let first = true
    for await (const rows of pagedRows(sql, stat, w, pageRows)) {
      let chunk = ''
      for (const r of rows) {
        chunk += `${first ? '' : ','}{"t":${secondsOf(r.us)},"value":${r.value}}`
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
