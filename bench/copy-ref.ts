// Reference B: a plain PostgreSQL COPY of the same rows the service stores
// (stat_id uuid, ts timestamptz, value float8) into an unindexed table, over
// two connections, with postgres.js COPY FROM STDIN writable streams.
//
// Two shapes:
// - per batch (the bar): one COPY statement (its own transaction) per 100 rows,
//   the unit in which phase 2 sends points. This is what the design's "about
//   190,000 rows/s by COPY over 2 connections" measured (a quick check here gave
//   198,000 rows/s with 100-row COPYs, 290,000 with 1,000-row COPYs).
// - streaming (context only): one COPY per connection kept open for the whole
//   duration, PostgreSQL's ceiling for these rows (over 1M rows/s here).
// rows/s counts committed rows only, checked against count(*).
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createSql, type Sql } from '../shared/db.js'

export interface CopyResult {
  connections: number
  /** Rows per COPY statement; 0 for one streaming COPY per connection. */
  rowsPerCopy: number
  copies: number
  rows: number
  windowMs: number
  rowsPerSec: number
}

const STATS = 8

function rowsText(statIds: string[], n: number): string {
  const ts = new Date().toISOString()
  let text = ''
  for (let i = 0; i < n; i++) text += `${statIds[i % STATS]}\t${ts}\t1\n`
  return text
}

async function perBatch(sql: Sql, statIds: string[], until: number, rowsPerCopy: number): Promise<{ rows: number; copies: number }> {
  let rows = 0
  let copies = 0
  while (Date.now() < until) {
    const writable = await sql`copy bench_copy_ref (stat_id, ts, value) from stdin`.writable()
    writable.end(rowsText(statIds, rowsPerCopy))
    await once(writable, 'finish') // postgres.js calls back on CommandComplete: the rows are committed
    rows += rowsPerCopy
    copies++
  }
  return { rows, copies }
}

async function streaming(sql: Sql, statIds: string[], until: number): Promise<{ rows: number; copies: number }> {
  let rows = 0
  async function* chunks() {
    while (Date.now() < until) {
      rows += 1000
      yield Buffer.from(rowsText(statIds, 1000))
    }
  }
  const writable = await sql`copy bench_copy_ref (stat_id, ts, value) from stdin`.writable()
  await pipeline(Readable.from(chunks()), writable)
  return { rows, copies: 1 }
}

export async function runCopyReference(
  databaseUrl: string,
  durationMs: number,
  opts: { connections?: number; rowsPerCopy?: number } = {},
): Promise<CopyResult> {
  const connections = opts.connections ?? 2
  const rowsPerCopy = opts.rowsPerCopy ?? 100
  // The same pool code the service uses (TCP_NODELAY set on the socket).
  const sql = createSql(databaseUrl, { max: connections, applicationName: 'metrics-bench-copy' })
  try {
    await sql`drop table if exists bench_copy_ref`
    await sql`create table bench_copy_ref (stat_id uuid not null, ts timestamptz not null, value double precision not null)`
    const statIds = Array.from({ length: STATS }, () => randomUUID())
    // Open both connections before the clock starts.
    await Promise.all(Array.from({ length: connections }, () => sql`select 1`))
    const started = performance.now()
    const until = Date.now() + durationMs
    const parts = await Promise.all(
      Array.from({ length: connections }, () =>
        rowsPerCopy > 0 ? perBatch(sql, statIds, until, rowsPerCopy) : streaming(sql, statIds, until),
      ),
    )
    const windowMs = performance.now() - started
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from bench_copy_ref`
    const sent = parts.reduce((a, p) => a + p.rows, 0)
    if (n !== sent) throw new Error(`COPY reference: sent ${sent} rows but the table holds ${n}`)
    await sql`drop table bench_copy_ref`
    return {
      connections,
      rowsPerCopy,
      copies: parts.reduce((a, p) => a + p.copies, 0),
      rows: n,
      windowMs: Math.round(windowMs),
      rowsPerSec: Math.round((n / windowMs) * 1000),
    }
  } finally {
    await sql.end({ timeout: 5 })
  }
}
