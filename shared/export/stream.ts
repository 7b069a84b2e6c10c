// Export rows are read from PostgreSQL in pages, one stat at a time in name
// order, so memory stays flat however many rows there are. Each page is a
// statement of its own, keyed on the last timestamp sent: a single streamed
// statement (a cursor) stays one statement until it ends, so an export longer
// than the connection's statement timeout was cut off half-way.
// A page is a short index range scan on (stat_id, ts) whatever the
// export's size.
import type { Sql } from '../db.js'
import { type Points, pointsOfRows, type Row, slicePoints } from '../points/blocks.js'
import { seriesColumns } from '../points/read.js'
import type { ReadPool } from '../read-replica.js'
import { tagsCell } from '../ingest/tags.js'
import type { Stat } from '../stats/repo.js'
import type { ExportWindow } from './window.js'

export const PAGE_ROWS = 10_000
const DAY_US = 86_400_000_000n

/** Whole seconds as exports always gave them (PostgreSQL's rounding of the epoch: half away from zero). */
export function secondsOf(us: number): number {
  const s = us / 1e6
  return s < 0 ? -Math.round(-s) : Math.round(s)
}

/**
 * Where an export's statements go: a pool, or the read pool (shared/read-replica.ts), which runs each on the
 * replica when it is fit and runs it again on the primary when the replica fails under it.
 */
export type ExportReads = Sql | Pick<ReadPool, 'run'>

/** One step of a stat's export: the points it read, and where the next step starts. */
interface Step {
  points: Points
  next: bigint
}

/**
 * One stat's rows in the window, by time, page by page: hot rows and day blocks alike (sql/0027). A step never
 * crosses a UTC day and starts at the stat's first point at or after the previous step's end (hot rows or
 * blocks), so empty days cost nothing: a stat of one point is read in four statements whatever the window's
 * length (a stat without blocks was walked day by day from the window's start, three
 * statements a day, 3-5 s for a year's window). A day with a block is read whole (its blocks decoded here,
 * merged with the day's hot rows: a backfill not compacted yet) and cut into pages, so a day's memory is its
 * points. A day of hot rows only is paged in SQL: points are append-only and several may share a timestamp, so
 * a full page gives back the rows of its last timestamp and the next page starts at that timestamp inclusive; a
 * page that is one timestamp throughout is followed by every row of that timestamp.
 *
 * Each step is one read of the read pool, made again whole on the primary when the replica fails under it
 *: a step's rows are sent only once it has read them all and the next starts after its last
 * row, so a replica lost mid-export costs the client nothing, and every row is sent once.
 */
export async function* pagedRows(reads: ExportReads, stat: Stat, w: ExportWindow, pageRows = PAGE_ROWS): AsyncGenerator<Points> {
  const run: <T>(read: (sql: Sql) => Promise<T>) => Promise<T> =
    typeof reads === 'function' ? (read) => read(reads) : (read) => reads.run(read)
  const end = BigInt(w.to.getTime()) * 1000n + 1n // the window's end is inclusive
  const stepFrom = (from: bigint) => {
    const read = run((sql) => readStep(sql, stat, from, end, pageRows))
    // Handled here as well as where it is awaited: a client gone mid-export ends this generator with a read
    // still under way, whose failure would otherwise be an unhandled rejection.
    read.catch(() => {})
    return read
  }
  let pending = w.from.getTime() * 1000 < end ? stepFrom(BigInt(w.from.getTime()) * 1000n) : null
  while (pending) {
    const step = await pending
    if (!step) return
    // The next step is read while this one's pages are written out: PostgreSQL and Node work side by side.
    pending = step.next < end ? stepFrom(step.next) : null
    for (let i = 0; i < step.points.length; i += pageRows) yield slicePoints(step.points, i, Math.min(i + pageRows, step.points.length))
  }
}

/** The rows of the step that starts at the stat's first point at or after `lower` (µs), null when none is left before `end`. */
async function readStep(sql: Sql, stat: Stat, lower: bigint, end: bigint, pageRows: number): Promise<Step | null> {
  const at = (us: bigint) => sql`'epoch'::timestamptz + ${us.toString()}::int8 * interval '1 microsecond'`
  const usOf = sql`(extract(epoch from ts) * 1000000)::int8`
  const dayOf = (us: bigint) => (us / DAY_US) * DAY_US
  // The first point's time: the hot rows' by their index, the blocks' by the primary key (stat_id, day) from the
  // day holding `lower` (a block's points all lie in its day). A block that began before `lower` counts from
  // `lower`. No row on a side is null there, and least() skips it.
  const [first] = await sql<{ us: string | null }[]>`
    select (extract(epoch from least(
      (select min(ts) from points where stat_id = ${stat.id} and ts >= ${at(lower)} and ts < ${at(end)}),
      (select min(greatest(first_ts, ${at(lower)})) from point_blocks
        where stat_id = ${stat.id} and day >= ${at(dayOf(lower))} and day < ${at(end)} and last_ts >= ${at(lower)} and first_ts < ${at(end)})
    )) * 1000000)::int8 as us`
  if (first.us === null) return null
  lower = BigInt(first.us)
  const dayEnd = dayOf(lower) + DAY_US
  const upper = dayEnd < end ? dayEnd : end
  // A day without blocks in the range (recent hours before the compaction takes them, or TimescaleDB) is paged
  // through its rows; the same statement checks for blocks, so that rows moved into a block meanwhile are never
  // missed: a day with blocks is read whole by seriesPoints, from both sides in one snapshot.
  const hasBlocks = sql`exists (select 1 from point_blocks
    where stat_id = ${stat.id} and day = ${at(dayOf(lower))} and last_ts >= ${at(lower)} and first_ts < ${at(upper)})`
  const rows = await sql<Row[]>`
    select ${usOf} as us, value from points where stat_id = ${stat.id} and ts >= ${at(lower)} and ts < ${at(upper)} and not ${hasBlocks}
    order by ts limit ${pageRows}`
  if (!rows.length) return { points: await seriesColumns(sql, stat.id, lower, upper), next: upper }
  if (rows.length < pageRows) return { points: pointsOfRows(rows), next: upper }
  const last = rows[rows.length - 1].us
  let cut = rows.length - 1
  while (cut > 0 && rows[cut - 1].us === last) cut--
  if (cut > 0) return { points: pointsOfRows(rows.slice(0, cut)), next: BigInt(last) }
  return { points: await seriesColumns(sql, stat.id, BigInt(last), BigInt(last) + 1n), next: BigInt(last) + 1n }
}

/**
 * Writes ASCII text into `buf` at `at`; returns where the next byte goes. A loop here: Buffer's write and copy
 * cross into C++ on every call, which for the few bytes of a CSV field cost more than the bytes themselves.
 */
function put(buf: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[at + i] = text.charCodeAt(i)
  return at + text.length
}

/** put() for bytes (text already in UTF-8). */
function putBytes(buf: Buffer, at: number, bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) buf[at + i] = bytes[i]
  return at + bytes.length
}

/** '00' to '99' as ASCII bytes, two a number. */
const TWO_DIGITS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1')

/** Writes k (0 to 99) as two digits and the byte `then`; returns where the next byte goes. */
function twoDigits(buf: Buffer, at: number, k: number, then: number): number {
  buf[at] = TWO_DIGITS[2 * k]
  buf[at + 1] = TWO_DIGITS[2 * k + 1]
  buf[at + 2] = then
  return at + 3
}

/**
 * Writes `new Date(t * 1000).toISOString()` for whole seconds into `buf` at `at`; returns where the next byte goes.
 * The date part is kept from the previous call while the day is the same: exported rows come in time order, and
 * the Date per row was a fifth of the CSV export's time.
 */
function isoSecondsWriter(): (t: number, buf: Buffer, at: number) => number {
  let dayStart = Number.NaN
  let datePart = Buffer.alloc(0)
  return (t, buf, at) => {
    if (!(t - dayStart >= 0 && t - dayStart < 86_400)) {
      dayStart = Math.floor(t / 86_400) * 86_400
      const day = new Date(dayStart * 1000).toISOString()
      datePart = Buffer.from(day.slice(0, day.indexOf('T') + 1), 'latin1')
    }
    const s = t - dayStart
    let o = putBytes(buf, at, datePart)
    o = twoDigits(buf, o, Math.floor(s / 3600), 58) // ':'
    o = twoDigits(buf, o, Math.floor(s / 60) % 60, 58)
    o = twoDigits(buf, o, s % 60, 46) // '.'
    return put(buf, o, '000Z')
  }
}

/** RFC 4180 quoting, for fields that may hold commas, quotes or line breaks. */
export function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export const CSV_HEADER = 'stat,kind,timestamp,iso_time,value,tags\n'

/**
 * CSV: header, one row per observation, then `# requested_range=… applied_from=… applied_to=…`. `stats` holds
 * series (docs/decisions.md §24): a stat, then its tagged series; the tags column is the tag set as `k=v;k=v`.
 */
export async function* exportCsv(reads: ExportReads, stats: Stat[], w: ExportWindow, pageRows = PAGE_ROWS): AsyncGenerator<Buffer> {
  yield Buffer.from(CSV_HEADER)
  const iso = isoSecondsWriter()
  for (const stat of stats) {
    const prefix = Buffer.from(`${csvField(stat.name)},${stat.kind},`)
    const suffix = Buffer.from(stat.tags ? `,${csvField(tagsCell(stat.tags))}\n` : ',\n')
    // Each page is written into one buffer: its rows built as strings and joined were, with their garbage, most of
    // a large export's CPU. A row is at most the stat's fields and 14 + 27 + 24 bytes of time, ISO time (years past
    // 9999 included) and value, with their two commas.
    const rowBytes = prefix.length + suffix.length + 67
    for await (const page of pagedRows(reads, stat, w, pageRows)) {
      const buf = Buffer.allocUnsafe(page.length * rowBytes)
      let o = 0
      for (let i = 0; i < page.length; i++) {
        const t = secondsOf(page.us[i])
        o = putBytes(buf, o, prefix)
        o = put(buf, o, String(t))
        buf[o++] = 44 // ','
        o = iso(t, buf, o)
        buf[o++] = 44
        o = put(buf, o, String(page.values[i]))
        o = putBytes(buf, o, suffix)
      }
      yield buf.subarray(0, o)
    }
  }
  yield Buffer.from(`# requested_range=${w.requested} applied_from=${w.from.toISOString()} applied_to=${w.to.toISOString()}\n`)
}

/**
 * JSON: the window fields, then `stats: [{name, kind, points: [{t, value}]}]`, written as it is read. `stats`
 * holds series, a stat then its tagged series (docs/decisions.md §24): one entry per stat, a tagged series'
 * points carrying `tags`, series after series.
 */
export async function* exportJson(reads: ExportReads, stats: Stat[], w: ExportWindow, pageRows = PAGE_ROWS): AsyncGenerator<string> {
  const head = {
    requested_range: w.requested,
    applied_from: w.from.toISOString(),
    applied_to: w.to.toISOString(),
    retention_days: w.retentionDays,
    range_clamped_by_retention: w.clamped,
  }
  yield `${JSON.stringify(head).slice(0, -1)},"stats":[`
  let first = true
  for (const [i, stat] of stats.entries()) {
    const sameStat = i > 0 && stat.parentId !== null && stats[i - 1].name === stat.name
    if (!sameStat) {
      yield `${i ? ']},' : ''}{"name":${JSON.stringify(stat.name)},"kind":"${stat.kind}","points":[`
      first = true
    }
    const tags = stat.tags ? `,"tags":${JSON.stringify(stat.tags)}` : ''
    for await (const page of pagedRows(reads, stat, w, pageRows)) {
      let chunk = ''
      for (let i = 0; i < page.length; i++) {
        chunk += `${first ? '' : ','}{"t":${secondsOf(page.us[i])},"value":${page.values[i]}${tags}}`
        first = false
      }
      yield chunk
    }
  }
  yield stats.length ? ']}]}\n' : ']}\n'
}

/** Whether the stats hold points older than the window (so "all history" was cut by retention). */
export async function hasOlderPoints(sql: Sql, stats: Stat[], before: Date): Promise<boolean> {
  if (!stats.length) return false
  const [row] = await sql<{ found: boolean }[]>`
    select exists (select 1 from points where stat_id = any(${stats.map((s) => s.id)}::uuid[]) and ts < ${before})
        or exists (select 1 from point_blocks where stat_id = any(${stats.map((s) => s.id)}::uuid[]) and first_ts < ${before}) as found`
  return row.found
}
