// bench:storage: bytes per point on disk for the same data in the
// service's PostgreSQL schema, InfluxDB 1.x and VictoriaMetrics, each after its
// compaction, and the compaction time per million points.
//
// Data: BENCH_STORAGE_GAUGES gauges (a slow wave plus noise, two decimals) and
// BENCH_STORAGE_COUNTERS counters (small integers), a point every 10 s for
// BENCH_STORAGE_DAYS days (defaults 100, 100, 7: 12.1 million points).
//
// The service: rows go into a freshly migrated database's `points` table by
// COPY, the rows the persist job stores (the write path's speed is bench:writes'
// business; this bench measures what the rows cost on disk), then the service's
// own compaction packs them into per-stat day blocks (sql/0027). Its figure is
// every relation holding points (the hot table and the blocks: heap, indexes,
// TOAST, through pg_total_relation_size), with the rows before compaction as
// the same-run reference. BENCH_STORAGE_CANDIDATES=1 also measures the block
// layouts considered before (offsets and float8, deltas and int8; pglz, lz4).
//
// Peers run on free ports bound to 127.0.0.1 with data directories under /tmp,
// removed afterwards; InfluxDB is told to compact cold shards after seconds,
// VictoriaMetrics is flushed and force-merged. BENCH_STORAGE_PEERS=0 skips them.
//
// Export, same run: every point of one stat, then of all of them, read as CSV over HTTP by a client
// that counts the rows: from the service's export stream (exportCsv, what GET /api/v1/export sends,
// served by a bare node:http server so the figure is the export's own cost, not the API's
// middleware), after compaction, so from blocks; and from InfluxDB 1.x (/query, chunked, CSV).
// BENCH_STORAGE_EXPORTS=0 skips them.
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createSql } from '../shared/db.js'
import { exportCsv, pagedRows } from '../shared/export/stream.js'
import type { ExportWindow } from '../shared/export/window.js'
import { compactPoints } from '../shared/points/compaction.js'
import type { Stat } from '../shared/stats/repo.js'
import { createTestDatabase, prepareTemplate } from '../test/helpers/db.js'
import { freePort, HOST } from './procs.js'

const env = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt)
const GAUGES = env('BENCH_STORAGE_GAUGES', 100)
const COUNTERS = env('BENCH_STORAGE_COUNTERS', 100)
const DAYS = env('BENCH_STORAGE_DAYS', 7)
const STEP = 10
const PEERS = process.env.BENCH_STORAGE_PEERS !== '0'
/** BENCH_STORAGE_EXPORTS=0 skips the CSV exports over HTTP (bytes on disk only). */
const EXPORTS = process.env.BENCH_STORAGE_EXPORTS !== '0'
/** BENCH_STORAGE_SERVICE=0 measures the peers alone (the data is deterministic: the same points every run). */
const SERVICE = process.env.BENCH_STORAGE_SERVICE !== '0'
// The layouts measured before the blocks were built (BENCH_STORAGE_CANDIDATES=1): how the choice was made.
const CANDIDATES = process.env.BENCH_STORAGE_CANDIDATES === '1'
/** BENCH_STORAGE_TAGGED=1: every series is a tagged series (3 tags) of one stat per kind (docs/decisions.md §24), not a stat of its own. */
const TAGGED = process.env.BENCH_STORAGE_TAGGED === '1'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const say = (s: string) => console.log(s)

const END = Math.floor(Date.now() / 1000 / 86_400) * 86_400 - 86_400 // whole days, ending yesterday at midnight
const START = END - DAYS * 86_400
const PER_STAT = (END - START) / STEP
const STATS = GAUGES + COUNTERS
const TOTAL = PER_STAT * STATS

/** Deterministic noise (xorshift), so every run and every store gets the same values. */
function rng(seed: number) {
  let x = (seed * 2654435761) >>> 0 || 1
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x / 4294967296
  }
}

/** Stat `s`'s values by time: gauges a daily wave plus noise at two decimals, counters small integers. */
function* series(s: number): Generator<[number, number]> {
  const r = rng(s + 1)
  const gauge = s < GAUGES
  const level = 20 + (s % 17) * 7
  for (let i = 0; i < PER_STAT; i++) {
    const t = START + i * STEP
    const v = gauge
      ? Math.round((level + level * 0.3 * Math.sin((2 * Math.PI * t) / 86_400 + s) + (r() - 0.5) * level * 0.05) * 100) / 100
      : Math.floor(r() * r() * 12)
    yield [t, v]
  }
}
const statName = (s: number) => (s < GAUGES ? `gauge_${s}` : `counter_${s - GAUGES}`)

function dirBytes(dir: string): number {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size
  }
  return n
}

/** Polls `measure` until it stops changing for `quietMs` (a peer's background compaction done). */
async function settled(measure: () => number, quietMs: number, maxMs: number): Promise<number> {
  const until = Date.now() + maxMs
  let last = measure()
  let since = Date.now()
  while (Date.now() < until) {
    await sleep(500)
    const now = measure()
    if (now !== last) [last, since] = [now, Date.now()]
    else if (Date.now() - since >= quietMs) break
  }
  return last
}

/** Line protocol, one stat at a time, in bodies of about 5,000 lines. */
function* lineBodies(): Generator<string> {
  for (let s = 0; s < STATS; s++) {
    let lines: string[] = []
    for (const [t, v] of series(s)) {
      lines.push(`m,stat=${statName(s)} value=${v} ${t}`)
      if (lines.length === 5000) {
        yield lines.join('\n')
        lines = []
      }
    }
    if (lines.length) yield lines.join('\n')
  }
}

async function post(url: string, body: string) {
  const r = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'text/plain' } })
  if (!r.ok && r.status !== 204) throw new Error(`${url}: ${r.status} ${await r.text()}`)
}

async function until(url: string, child: ChildProcess, ms = 30_000, init?: RequestInit) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(url, { ...init, signal: AbortSignal.timeout(1000) })).ok) return
    } catch {
      /* not up yet */
    }
    await sleep(200)
  }
  throw new Error(`${url} did not answer`)
}

interface Row {
  store: string
  bytes: number
  compactMs: number | null
  note: string
}

/** Rows per second of a CSV export read over HTTP to the end, one entry per store and scope. */
interface ExportRate {
  store: string
  scope: 'one stat' | 'all stats'
  rows: number
  seconds: number
}
const exportRates: ExportRate[] = []

/** Reads a CSV answer to its end, counting data rows (lines that are neither the header nor a # comment). */
async function readCsv(url: string, init?: RequestInit): Promise<{ rows: number; seconds: number }> {
  const t0 = process.hrtime.bigint()
  const res = await fetch(url, init)
  if (!res.ok || !res.body) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  let lines = 0
  let comments = 0
  let atLineStart = true
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    for (let i = 0; i < chunk.length; i++) {
      if (atLineStart && chunk[i] === 35) comments++ // '#'
      atLineStart = chunk[i] === 10
      if (atLineStart) lines++
    }
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  return { rows: lines - comments - 1, seconds }
}

/** Times a CSV export twice (the second, warm, is kept) and checks it returned every point of its scope. */
async function timeExport(
  store: string,
  scope: ExportRate['scope'],
  expected: number,
  read: () => Promise<{ rows: number; seconds: number }>,
) {
  if (!EXPORTS) return
  let r = await read()
  r = await read()
  if (r.rows !== expected) throw new Error(`${store} export of ${scope}: ${r.rows} rows, expected ${expected}`)
  exportRates.push({ store, scope, ...r })
  say(
    `${store}: ${scope} exported as CSV over HTTP, ${r.rows.toLocaleString('en')} rows in ${r.seconds.toFixed(2)} s (${Math.round(r.rows / r.seconds).toLocaleString('en')} rows/s)`,
  )
}

async function service(rows: Row[]) {
  await prepareTemplate()
  const db = await createTestDatabase()
  const sql = createSql(db.url, { max: 2, statementTimeoutSeconds: 0 })
  try {
    const ids: string[] = []
    const [{ id: account }] = await sql<{ id: string }[]>`insert into accounts (email) values ('bench@example.com') returning id`
    if (TAGGED) {
      // A series per tag set under one stat per kind: its points are keyed by the series' own id, as a stat's are.
      const parents = await sql<{ id: string; kind: string }[]>`
        insert into stats (account_id, name, kind) values (${account}, 'tagged.gauge', 'gauge'), (${account}, 'tagged.counter', 'counter') returning id, kind`
      for (let s = 0; s < STATS; s++) {
        const kind = s < GAUGES ? 'gauge' : 'counter'
        const parent = parents.find((p) => p.kind === kind)!
        const tags = JSON.stringify({ host: `host-${s}`, region: `region-${s % 4}`, service: `svc-${s % 10}` })
        const [{ id }] = await sql<{ id: string }[]>`
          insert into stats (account_id, name, kind, parent_id, tags) values (${account}, ${`tagged.${kind}`}, ${kind}, ${parent.id}, ${tags}::text::jsonb) returning id`
        ids.push(id)
      }
    } else
      for (let s = 0; s < STATS; s++) {
        const [{ id }] = await sql<{ id: string }[]>`
        insert into stats (account_id, name, kind) values (${account}, ${statName(s)}, ${s < GAUGES ? 'gauge' : 'counter'}) returning id`
        ids.push(id)
      }
    const t0 = Date.now()
    async function* copyRows() {
      for (let s = 0; s < STATS; s++) {
        let chunk = ''
        for (const [t, v] of series(s)) {
          chunk += `${ids[s]}\t${new Date(t * 1000).toISOString()}\t${v}\n`
          if (chunk.length > 1 << 20) {
            yield chunk
            chunk = ''
          }
        }
        yield chunk
      }
    }
    await pipeline(Readable.from(copyRows()), await sql`copy points (stat_id, ts, value) from stdin`.writable())
    await sql`vacuum analyze points`
    say(`service: ${TOTAL.toLocaleString('en')} rows copied in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    const size = async (rel: string) =>
      Number((await sql<{ n: string }[]>`select pg_total_relation_size(${rel}::regclass)::text as n`)[0].n)
    const rowBytes = await size('points')
    // Reading a stat's raw points back (the export's pages), from rows now and from blocks after compaction.
    const exportRate = async () => {
      const stat = { id: ids[0], accountId: account, name: statName(0), kind: 'gauge' } as unknown as Stat
      const w: ExportWindow = {
        requested: 'all',
        from: new Date(START * 1000),
        to: new Date(END * 1000),
        retentionDays: 800,
        clamped: false,
      }
      const e0 = process.hrtime.bigint()
      let n = 0
      for (let rep = 0; rep < 3; rep++) for await (const page of pagedRows(sql, stat, w)) n += page.length
      return n / (Number(process.hrtime.bigint() - e0) / 1e9)
    }
    const fromRows = await exportRate()
    rows.push({
      store: 'service, rows before compaction (reference)',
      bytes: rowBytes,
      compactMs: null,
      note: 'points: heap + (stat_id, ts) index',
    })

    // The service's own compaction (the compact-points job's pass), as of the day after the data ends: every
    // day of it is past the hot days; the pass ends by rebuilding the emptied hot table's index (shrinkHotIndex).
    // Then a plain VACUUM, as autovacuum would run: the emptied heap's pages go back, the blocks stay.
    const c0 = Date.now()
    const done = await compactPoints(sql, new Date((END + 86_400) * 1000))
    const compactMs = Date.now() - c0
    if (done.points !== TOTAL) throw new Error(`compaction moved ${done.points} of ${TOTAL} points`)
    await sql`vacuum analyze points`
    await sql`vacuum analyze point_blocks`
    const [{ n: packed }] = await sql<{ n: number }[]>`select coalesce(sum(n), 0)::float8 as n from point_blocks`
    if (packed !== TOTAL) throw new Error(`blocks hold ${packed} of ${TOTAL} points`)
    const [enc] = await sql<{ scaled: number; raw: number }[]>`
      select count(*) filter (where scale is not null)::int as scaled, count(*) filter (where scale is null)::int as raw from point_blocks`
    const hot = await size('points')
    const [parts] = await sql<
      { heap: string; idx: string }[]
    >`select pg_relation_size('points')::text as heap, pg_indexes_size('points')::text as idx`
    say(
      `service: emptied hot table after VACUUM: heap ${Number(parts.heap).toLocaleString('en')} bytes, index ${Number(parts.idx).toLocaleString('en')} bytes` +
        (done.hotIndex ? ` (rebuilt by the pass from ${done.hotIndex.before.toLocaleString('en')} bytes)` : ' (not rebuilt by the pass)'),
    )
    const blocks = await size('point_blocks')
    say(
      `service: ${done.blocks} blocks (${enc.scaled} with scaled integer values, ${enc.raw} raw float8) in ${(compactMs / 1000).toFixed(1)} s; ` +
        `hot table left ${hot.toLocaleString('en')} bytes, blocks ${blocks.toLocaleString('en')} bytes`,
    )
    const fromBlocks = await exportRate()
    say(
      `service: one stat's ${PER_STAT.toLocaleString('en')} points exported (pagedRows, 3 times) at ${Math.round(fromRows).toLocaleString('en')} rows/s from rows, ` +
        `${Math.round(fromBlocks).toLocaleString('en')} rows/s from blocks (${(fromBlocks / fromRows).toFixed(2)}x)`,
    )
    const all = ids.map(
      (id, s) => ({ id, accountId: account, name: statName(s), kind: s < GAUGES ? 'gauge' : 'counter' }) as unknown as Stat,
    )
    const w: ExportWindow = { requested: 'all', from: new Date(START * 1000), to: new Date(END * 1000), retentionDays: 800, clamped: false }
    const server = createServer((req, res) => {
      const stats = req.url === '/one' ? all.slice(0, 1) : all
      res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' })
      Readable.from(exportCsv(sql, stats, w)).pipe(res)
    })
    await new Promise<void>((r) => server.listen(0, HOST, r))
    try {
      const url = `http://${HOST}:${(server.address() as AddressInfo).port}`
      await timeExport('service', 'one stat', PER_STAT, () => readCsv(`${url}/one`))
      await timeExport('service', 'all stats', TOTAL, () => readCsv(`${url}/all`))
    } finally {
      server.close()
    }
    rows.push({ store: 'service, after compaction: blocks', bytes: blocks, compactMs, note: 'point_blocks: heap, TOAST, primary key' })
    rows.push({
      store: 'service, after compaction: blocks + emptied hot table',
      bytes: hot + blocks,
      compactMs,
      note: 'points + point_blocks: heap, TOAST, indexes',
    })
    if (!CANDIDATES) return
    // The blocks' ground truth for the candidates below: the rows again.
    await sql`insert into points (stat_id, ts, value)
      select b.stat_id, d.ts, d.value from point_blocks b cross join lateral point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d`

    // Candidate blocks: one row per stat and UTC day. (a) timestamps as offsets from the day's start and
    // values as float8; (b) timestamps as deltas from the previous point (a regular series is one number
    // repeated) and values as integers scaled by 100 where that is exact for the whole block.
    const candidates = [
      {
        name: 'arrays (offsets, float8)',
        cols: 'dts int4[] not null, vals float8[] not null',
        select: `
        select stat_id, day, array_agg(off order by ts), array_agg(value order by ts) from (
          select stat_id, ts, value, (ts at time zone 'UTC')::date as day,
                 (extract(epoch from ts) - extract(epoch from date_trunc('day', ts at time zone 'UTC')))::int4 as off from points) p
        group by 1, 2`,
      },
      {
        name: 'arrays (deltas, values x100 as int8)',
        cols: 'dts int4[] not null, vals int8[] not null',
        select: `
        select stat_id, day, array_agg(d order by ts), array_agg(round(value * 100)::int8 order by ts) from (
          select stat_id, ts, value, (ts at time zone 'UTC')::date as day,
                 coalesce(extract(epoch from ts - lag(ts) over w), 0)::int4 as d from points
          window w as (partition by stat_id, (ts at time zone 'UTC')::date order by ts)) p
        group by 1, 2 having bool_and(round(value * 100) / 100 = value)`,
      },
    ]
    for (const cand of candidates) {
      for (const method of ['pglz', 'lz4']) {
        await sql.unsafe('drop table if exists blocks')
        await sql.unsafe(`create table blocks (stat_id uuid not null, day date not null, ${cand.cols}, primary key (stat_id, day))`)
        const ok = await sql
          .unsafe(`alter table blocks alter column dts set compression ${method}, alter column vals set compression ${method}`)
          .then(
            () => true,
            () => false,
          )
        if (!ok) {
          say(`(${method}: not available on this server)`)
          continue
        }
        const c0 = Date.now()
        const done = await sql.unsafe(`insert into blocks ${cand.select}`)
        const ms = Date.now() - c0
        await sql.unsafe('vacuum analyze blocks')
        const [{ n }] = await sql<{ n: number }[]>`select coalesce(sum(cardinality(vals)), 0)::int as n from blocks`
        if (n !== TOTAL) say(`(${cand.name}: ${n} of ${TOTAL} points fit; ${done.count} blocks)`)
        rows.push({
          store: `candidate: day blocks, ${cand.name}, TOAST ${method}`,
          bytes: await size('blocks'),
          compactMs: ms,
          note: 'heap + TOAST + primary key',
        })
      }
    }
  } finally {
    await sql.end({ timeout: 1 })
    await db.drop()
  }
}

/** Stops a peer and waits (up to 10 s) for it to exit: one still writing its files makes their removal fail. */
async function stop(proc: ChildProcess) {
  if (proc.exitCode !== null) return
  const exited = new Promise((r) => proc.once('exit', r))
  proc.kill('SIGTERM')
  await Promise.race([exited, sleep(10_000)])
}

async function influx(rows: Row[]) {
  const dir = mkdtempSync('/tmp/i26-storage-influx-')
  const [http, rpc] = [await freePort(), await freePort()]
  writeFileSync(
    join(dir, 'influxdb.conf'),
    [
      'reporting-disabled = true',
      `bind-address = "${HOST}:${rpc}"`,
      `[meta]\n  dir = "${dir}/meta"`,
      `[data]\n  dir = "${dir}/data"\n  wal-dir = "${dir}/wal"\n  query-log-enabled = false\n  cache-snapshot-write-cold-duration = "1s"\n  compact-full-write-cold-duration = "2s"`,
      '[monitor]\n  store-enabled = false',
      `[http]\n  enabled = true\n  bind-address = "${HOST}:${http}"\n  log-enabled = false`,
      '[continuous_queries]\n  enabled = false',
      '[logging]\n  level = "warn"',
      '',
    ].join('\n'),
  )
  const proc = spawn('influxd', ['run', '-config', join(dir, 'influxdb.conf')], { stdio: 'ignore' })
  try {
    const base = `http://${HOST}:${http}`
    await until(`${base}/query`, proc, 30_000, { method: 'POST', body: new URLSearchParams({ q: 'CREATE DATABASE bench' }) })
    const t0 = Date.now()
    for (const body of lineBodies()) await post(`${base}/write?db=bench&precision=s`, body)
    say(`influxdb: written in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    const c0 = Date.now()
    const bytes = await settled(() => dirBytes(dir), 8000, 600_000)
    const part = (d: string) => (dirBytes(join(dir, d)) / 1e6).toFixed(1)
    say(`influxdb: ${bytes.toLocaleString('en')} bytes on disk, ${(bytes / TOTAL).toFixed(2)} bytes per point`)
    rows.push({
      store: 'InfluxDB 1.x (TSM, after full compaction)',
      bytes,
      compactMs: Date.now() - c0 - 8000,
      note: `data ${part('data')} MB + wal ${part('wal')} MB + meta`,
    })
    const query = (q: string) =>
      readCsv(`${base}/query?${new URLSearchParams({ db: 'bench', q, epoch: 's', chunked: 'true', chunk_size: '10000' })}`, {
        headers: { accept: 'application/csv' },
      })
    await timeExport('InfluxDB 1.x', 'one stat', PER_STAT, () => query(`SELECT value FROM m WHERE stat = '${statName(0)}'`))
    await timeExport('InfluxDB 1.x', 'all stats', TOTAL, () => query('SELECT value, stat FROM m'))
  } finally {
    await stop(proc)
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
  }
}

async function victoria(rows: Row[]) {
  const dir = mkdtempSync('/tmp/i26-storage-vm-')
  const port = await freePort()
  const proc = spawn(
    'victoria-metrics',
    [`-storageDataPath=${dir}`, `-httpListenAddr=${HOST}:${port}`, '-retentionPeriod=10y', '-loggerLevel=ERROR'],
    { stdio: 'ignore' },
  )
  try {
    const base = `http://${HOST}:${port}`
    await until(`${base}/health`, proc)
    const t0 = Date.now()
    for (const body of lineBodies()) await post(`${base}/write?precision=s`, body)
    say(`victoriametrics: written in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    const c0 = Date.now()
    await fetch(`${base}/internal/force_flush`)
    await fetch(`${base}/internal/force_merge`)
    const bytes = await settled(() => dirBytes(dir), 8000, 600_000)
    say(`victoriametrics: ${bytes.toLocaleString('en')} bytes on disk, ${(bytes / TOTAL).toFixed(2)} bytes per point`)
    rows.push({
      store: 'VictoriaMetrics (flushed, force-merged)',
      bytes,
      compactMs: Date.now() - c0 - 8000,
      note: 'storage data directory',
    })
  } finally {
    await stop(proc)
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
  }
}

async function main() {
  say(
    `bench:storage: ${GAUGES} gauges + ${COUNTERS} counters, a point every ${STEP} s for ${DAYS} days = ${TOTAL.toLocaleString('en')} points`,
  )
  const rows: Row[] = []
  if (SERVICE) await service(rows)
  if (PEERS) {
    await influx(rows)
    await victoria(rows)
  }
  const influxRow = rows.find((r) => r.store.startsWith('InfluxDB'))
  say('')
  say('| store | bytes on disk | bytes per point | vs InfluxDB | compaction s per million points | what is counted |')
  say('|---|---|---|---|---|---|')
  for (const r of rows) {
    const bpp = r.bytes / TOTAL
    const ratio = influxRow ? `${(bpp / (influxRow.bytes / TOTAL)).toFixed(2)}x` : 'n/a'
    const cpm = r.compactMs === null ? 'n/a' : (Math.max(0, r.compactMs) / 1000 / (TOTAL / 1e6)).toFixed(2)
    say(`| ${r.store} | ${r.bytes.toLocaleString('en')} | ${bpp.toFixed(2)} | ${ratio} | ${cpm} | ${r.note} |`)
  }
  say('')
  say('| export as CSV over HTTP | points | seconds | rows per second | vs InfluxDB |')
  say('|---|---|---|---|---|')
  for (const e of exportRates) {
    const ref = exportRates.find((x) => x.store === 'InfluxDB 1.x' && x.scope === e.scope)
    const rate = e.rows / e.seconds
    say(
      `| ${e.store}, ${e.scope} | ${e.rows.toLocaleString('en')} | ${e.seconds.toFixed(2)} | ${Math.round(rate).toLocaleString('en')} | ${ref ? `${(rate / (ref.rows / ref.seconds)).toFixed(2)}x` : 'n/a'} |`,
    )
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
