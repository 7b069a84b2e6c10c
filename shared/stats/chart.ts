// A stat's chart as GET /api/v1/stats/:name answers it without tag parameters: the stat by name, its series and their
// buckets in one statement. They were three statements one after another, and the two round trips saved cost the web
// process about as much CPU as everything else it does for a 24-hour chart (docs/benchmarks.md, the read
// head-to-head). One statement also reads the three from one snapshot.
import type { Db } from '../db.js'
import { parseStatName } from '../ingest/names.js'
import { addRows, bucketRows, readBuckets, type Bucket, type BucketRow } from './read.js'
import type { Window } from './ranges.js'
import { STAT_COLUMNS, toStat, type Stat, type StatRow } from './repo.js'

/** Stats last read here without tagged series, by account and name: whose id the next read of the same name guesses. */
const single = new Map<string, string>()
const MAX_ENTRIES = 10_000

/**
 * The stat named `raw` (as a URL gives it, normalised as writes store names) and its buckets over `w`, all its series
 * read as one (docs/decisions.md §24); null when the account has no such stat.
 *
 * The buckets are readBuckets' own: its statement, with the same parameters, inside this one. It needs the series'
 * ids before the look-up has found them, so it takes them from the last read of the name in this process (a stat
 * without tagged series: its own id) and is used only when the look-up, in the same statement and snapshot, finds
 * exactly that stat without tagged series; otherwise (a first read here, a stat deleted and written again, a stat
 * given tags since) readBuckets reads them in a second statement. Taking the ids from the look-up in SQL instead
 * changed PostgreSQL's row estimates and with them its plan (the order in which a bucket's rows are added up).
 */
export async function readStatChart(sql: Db, accountId: string, raw: string, w: Window): Promise<{ stat: Stat; points: Bucket[] } | null> {
  const name = parseStatName(raw)
  if (!name.ok) return null
  const key = `${accountId}\n${name.value}`
  const guess = single.get(key)
  const rows = guess === undefined ? undefined : await bucketRows(sql, [guess], w)
  // The rows come back as one bytea of 40 bytes a row (t, n, sum, min, max as float8; t and n are whole numbers
  // well below 2^53, so exact), in the order read, rather than a row each (as readSets does).
  const [row] = await sql<(StatRow & { series: string[]; b: Buffer | null })[]>`
    select ${sql.unsafe(STAT_COLUMNS)},
      array(select c.id from stats c where c.parent_id = s.id order by c.tags::text)::text[] as series,
      ${
        rows
          ? sql`(
        select string_agg(float8send(q.t::float8) || float8send(q.n::float8) || float8send(q.sum) || float8send(q.min) || float8send(q.max), ''::bytea)
        from (${rows.query}) q)`
          : sql`null::bytea`
      } as b
    from stats s where s.account_id = ${accountId} and s.name = ${name.value} and s.parent_id is null`
  if (!row) {
    single.delete(key)
    return null
  }
  const stat = toStat(row)
  if (row.series.length) {
    single.delete(key)
    // The series in listSeries' order: the stat's own row, then its tagged series by tags.
    return { stat, points: await readBuckets(sql, [stat.id, ...row.series], stat.kind, w) }
  }
  if (!rows || guess !== stat.id) {
    if (single.size >= MAX_ENTRIES) single.clear()
    single.set(key, stat.id)
    return { stat, points: await readBuckets(sql, stat.id, stat.kind, w) }
  }
  const out = new Map<string, Bucket[]>([[stat.id, []]])
  addRows(
    unpack(row.b, stat.id),
    () => stat.id,
    () => stat.kind,
    rows.own,
    out,
  )
  return { stat, points: out.get(stat.id)! }
}

function unpack(b: Buffer | null, statId: string): BucketRow[] {
  if (!b) return []
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const rows: BucketRow[] = new Array(b.byteLength / 40)
  for (let i = 0, o = 0; i < rows.length; i++, o += 40)
    rows[i] = {
      stat_id: statId,
      t: view.getFloat64(o),
      n: view.getFloat64(o + 8),
      sum: view.getFloat64(o + 16),
      min: view.getFloat64(o + 24),
      max: view.getFloat64(o + 32),
    }
  return rows
}
