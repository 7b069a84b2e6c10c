// Read-path benchmark (docs/decisions.md §D-T: reads). Not a
// test: it prints figures and the targets beside them.
//
//   1. Chart read: one stat holding BENCH_CHART_POINTS points (10,000,000)
//      spread evenly over the last 180 days, rollups built with SQL the way
//      refreshRollups builds them (no rollup_pending rows), then
//      GET /api/v1/stats/<name>?range=180d (and 1h, 7d) through a real API
//      process with a business-plan Bearer key. Target: 180d under 50 ms.
//      The chart stat's quantile sketches (docs/decisions.md §20) are then built by refreshSketches as
//      the rollup refresh builds them (every hour marked), timed, and their bytes per hour and day
//      counted; percentile reads: 30d with p95 (target: p99 under 50 ms), 180d with
//      p50/p95/p99, 24h with p95 (raw points, exact).
//   2. Dashboard read: an account with BENCH_DASHBOARD_STATS stats (1,000),
//      BENCH_DASHBOARD_POINTS points each (300) over the last day, rollups
//      built; GET /api/v1/dashboard?range=24h with a session cookie.
//   3. Export: one account per size in BENCH_EXPORT_SIZES (1000000,5000000),
//      each holding one stat of that many points over the last 30 days;
//      GET /api/v1/export?format=csv|json read to the end by the client, rows
//      counted, rows/s and the API process's peak RSS (VmHWM) reported. The
//      API process is restarted before each export so each peak is its own.
//      Target: at least 200,000 rows/s with memory flat in the row count.
//   4. History export: an account of BENCH_HISTORY_STATS small gauges (73) spread over the
//      business plan's 800 days (a few points each on one to three days, hundreds of days apart; every third
//      stat's days compacted into day blocks); GET /api/v1/export?format=csv of the whole history, and of one
//      stat of one point (?stat=), BENCH_HISTORY_REQUESTS times (3) each.
//   5. Large gauge percentiles: one gauge of BENCH_DENSE_POINTS points (4,000,000) over the
//      last 24 hours, rollups and sketches built as the refresh builds them; GET ?range=24h with 10 percentiles,
//      BENCH_DENSE_REQUESTS times (5) one after another, then four at once; the worst relative error of every
//      bucket's percentiles against exact nearest-rank (percentile_disc) of its points.
//   6. Group-by read (docs/decisions.md §24): one counter of BENCH_GROUP_SERIES tagged series (100, tags
//      {host: hNNN}), BENCH_GROUP_POINTS points each (2,000) over the last 30 days, rollups built, and the
//      reference: one untagged counter holding the same points (200,000, same times and span) in one series.
//      GET ?range=30d&group_by=host, GET ?range=30d (the stat as a whole) and the reference's GET ?range=30d,
//      BENCH_GROUP_REQUESTS rounds (200) of the three in turn: p50/p99 of each, the CPU each request cost (the
//      API process and its PostgreSQL backends, /proc), and the ratios grouped / whole and whole / reference.
//
// Own database (metrics_bench_reads, dropped at the end) and Redis prefix
// (deleted at the end) on the local PostgreSQL and Redis; every request goes
// to 127.0.0.1; children stopped and everything cleaned up also on error and
// on SIGINT/SIGTERM when run standalone (`npx tsx bench/reads-bench.ts`).
//
// Env: BENCH_CHART_POINTS (10000000), BENCH_CHART_REQUESTS (50),
// BENCH_DASHBOARD_STATS (1000), BENCH_DASHBOARD_POINTS (300),
// BENCH_DASHBOARD_REQUESTS (20), BENCH_EXPORT_SIZES (1000000,5000000; empty
// or 0 skips the export part), BENCH_EXPORT_FORMATS (csv,json), BENCH_HISTORY_STATS (73; 0 skips),
// BENCH_HISTORY_REQUESTS (3), BENCH_DENSE_POINTS (4000000; 0 skips), BENCH_DENSE_REQUESTS (5),
// BENCH_GROUP_SERIES (100; 0 skips), BENCH_GROUP_POINTS (2000), BENCH_GROUP_REQUESTS (200),
// DATABASE_URL (server only; postgres://localhost), REDIS_URL
// (redis://127.0.0.1:6379).
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { createSession, SESSION_COOKIE } from '../shared/auth/sessions.js'
import { createSql, type Sql } from '../shared/db.js'
import { compactDay } from '../shared/points/compaction.js'
import { binOf as binOfSql, refreshSketches, Sketch } from '../shared/points/sketches.js'
import { readPercentiles } from '../shared/stats/percentiles.js'
import { resolveWindow } from '../shared/stats/ranges.js'
import { readBuckets } from '../shared/stats/read.js'
import {
  beginBench,
  busyLines,
  closingLines,
  envInt,
  isFailed,
  isMain,
  machineLine,
  runStandalone,
  tableLines,
  type BenchResultsBase,
  type Failed,
} from './common.js'
import { processCpuMs } from './machine.js'
import { freePort, HOST, waitForHttp200, type Child } from './procs.js'
import { createAccount } from './setup.js'
import { percentile, round } from './stats.js'

export type { Failed } from './common.js'

export const READS_DB_NAME = 'metrics_bench_reads'
const DAY = 86_400

export const READS_TARGETS = { chart180dP50Ms: 50, percentile30dP99Ms: 50, exportRowsPerSec: 200_000 } as const

export interface ReadsBenchOptions {
  chartPoints?: number
  chartRequests?: number
  dashboardStats?: number
  dashboardPointsPerStat?: number
  dashboardRequests?: number
  /** Rows per export size; an empty list skips the export part. */
  exportSizes?: number[]
  exportFormats?: Array<'csv' | 'json'>
  /** Small gauges over 800 days for the history export; 0 skips it. */
  historyStats?: number
  historyRequests?: number
  /** Points of the dense gauge (last 24 h) for the percentile reads; 0 skips them. */
  densePoints?: number
  denseRequests?: number
  /** Tagged series of the group-by stat; 0 skips the group-by read. */
  groupSeries?: number
  groupPointsPerSeries?: number
  groupRequests?: number
  /** Progress lines (stderr by default). */
  log?: (line: string) => void
}

export interface Latency {
  n: number
  p50: number
  p99: number
  max: number
  mean: number
}

export interface ChartRead {
  range: string
  latencyMs: Latency
  buckets: number
  /** Sum of the buckets' n: how many points the answer accounts for. */
  points: number
  bytes: number
}

export interface ExportRun {
  format: 'csv' | 'json'
  rowsStored: number
  rowsReceived: number
  complete: boolean
  status: number
  seconds: number
  rowsPerSec: number
  megabytes: number
  timeToFirstByteMs: number
  /** The API process: RSS right before the request, and its peak (VmHWM) over its whole life, read after the export. */
  rssBeforeMb: number
  peakRssMb: number
  error?: string
}

export interface ReadsBenchResults extends BenchResultsBase<Required<Omit<ReadsBenchOptions, 'log'>>> {
  setup?: {
    seconds: number
    pointsInserted: number
    loadSeconds: number
    indexSeconds: number
    rollupSeconds: number
    vacuumSeconds: number
    triggersSkipped: boolean
  }
  /** The chart stat's sketches: build time, rows and bytes per tier, sketch bytes per raw point. */
  sketches?: {
    buildSeconds: number
    hours: number
    days: number
    hourBytesAvg: number
    hourBytesMax: number
    dayBytesAvg: number
    dayBytesMax: number
    totalBytes: number
    bytesPerPoint: number
    pointsPerHour: number
  }
  chart?: { reads: ChartRead[]; targetMs: number; met: boolean; percentileMet?: boolean } | Failed
  /** The 30d p95 read in process: the reference average read, the whole percentile read and its parts alone. */
  percentileCost?: { parts: Array<{ name: string; latencyMs: Latency }> } | Failed
  dashboard?: { stats: number; latencyMs: Latency; bytes: number; points: number; expectedPoints: number } | Failed
  export?: { runs: ExportRun[]; targetRowsPerSec: number; memoryNote: string } | Failed
  /** Full history of many small stats, and of one stat of one point. */
  history?: { stats: number; points: number; blocks: number; all: Latency; one: Latency; rows: number } | Failed
  /** 10 percentiles over 24 h of the dense gauge: one at a time, four at once, and the worst error against exact. */
  dense?:
    | { points: number; minuteSketches: number; sequential: Latency; concurrent: Latency; worstRelativeError: number; buckets: number }
    | Failed
  /**
   * 30d read of a stat of many series grouped by host, the same read of the stat as a whole, and the 30d read of one
   * untagged stat of the same points (the reference); CPU per request of the API process and its backends.
   */
  groupBy?:
    | {
        series: number
        points: number
        groups: number
        whole: Latency
        grouped: Latency
        one: Latency
        cpuMs: { whole: number; grouped: number; one: number }
        ratioP50: number
        ratioP99: number
        wholeToOneP50: number
        wholeToOneP99: number
      }
    | Failed
}

// ---------------------------------------------------------------- helpers

/** Options from the environment (the defaults of the header comment). */
export function readsOptionsFromEnv(): Required<Omit<ReadsBenchOptions, 'log'>> {
  const sizes = (process.env.BENCH_EXPORT_SIZES ?? '1000000,5000000')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number)
  if (sizes.some((s) => !Number.isInteger(s) || s < 0))
    throw new Error(`BENCH_EXPORT_SIZES must be comma-separated integers, got ${process.env.BENCH_EXPORT_SIZES}`)
  const formats = (process.env.BENCH_EXPORT_FORMATS ?? 'csv,json')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (formats.some((f) => f !== 'csv' && f !== 'json'))
    throw new Error(`BENCH_EXPORT_FORMATS must list csv and/or json, got ${process.env.BENCH_EXPORT_FORMATS}`)
  return {
    chartPoints: envInt('BENCH_CHART_POINTS', 10_000_000, 1),
    chartRequests: envInt('BENCH_CHART_REQUESTS', 50, 1),
    dashboardStats: envInt('BENCH_DASHBOARD_STATS', 1_000, 1),
    dashboardPointsPerStat: envInt('BENCH_DASHBOARD_POINTS', 300, 1),
    dashboardRequests: envInt('BENCH_DASHBOARD_REQUESTS', 20, 1),
    exportSizes: sizes.filter((s) => s > 0),
    exportFormats: formats as Array<'csv' | 'json'>,
    historyStats: envInt('BENCH_HISTORY_STATS', 73, 0),
    historyRequests: envInt('BENCH_HISTORY_REQUESTS', 3, 1),
    densePoints: envInt('BENCH_DENSE_POINTS', 4_000_000, 0),
    denseRequests: envInt('BENCH_DENSE_REQUESTS', 5, 1),
    groupSeries: envInt('BENCH_GROUP_SERIES', 100, 0),
    groupPointsPerSeries: envInt('BENCH_GROUP_POINTS', 2_000, 1),
    groupRequests: envInt('BENCH_GROUP_REQUESTS', 200, 1),
  }
}

function latency(samples: number[]): Latency {
  const s = [...samples].sort((a, b) => a - b)
  return {
    n: s.length,
    p50: round(percentile(s, 0.5), 1),
    p99: round(percentile(s, 0.99), 1),
    max: round(s[s.length - 1] ?? NaN, 1),
    mean: round(s.reduce((a, b) => a + b, 0) / (s.length || 1), 1),
  }
}

/** VmRSS and VmHWM of a process, in MB. */
function memoryOf(pid: number): { rssMb: number; hwmMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssMb: round(kb('VmRSS') / 1024, 1), hwmMb: round(kb('VmHWM') / 1024, 1) }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })

/** One GET, body read to the end; the time runs from the request to the last byte. */
function get(
  port: number,
  path: string,
  headers: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ status: number; body: Buffer; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = http.get({ host: HOST, port, path, headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - started }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
  })
}

/** Streams a GET to the end without keeping it, counting bytes, newlines and `{` (JSON objects). */
function streamGet(
  port: number,
  path: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ status: number; bytes: number; newlines: number; braces: number; tail: string; ms: number; ttfbMs: number; head: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = http.get({ host: HOST, port, path, headers, agent: false }, (res) => {
      const ttfbMs = performance.now() - started
      let bytes = 0
      let newlines = 0
      let braces = 0
      let tail = ''
      let head = ''
      res.on('data', (c: Buffer) => {
        bytes += c.length
        for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) newlines++
        for (let i = c.indexOf(123); i !== -1; i = c.indexOf(123, i + 1)) braces++
        if (head.length < 300) head += c.subarray(0, 300).toString('utf8')
        tail = (tail + c.subarray(Math.max(0, c.length - 300)).toString('utf8')).slice(-300)
      })
      res.on('end', () => {
        clearTimeout(timer)
        resolve({ status: res.statusCode ?? 0, bytes, newlines, braces, tail, head, ms: performance.now() - started, ttfbMs })
      })
      res.on('error', reject)
    })
    const timer = setTimeout(() => req.destroy(new Error(`GET ${path}: not finished within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs)
    req.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
  })
}

// ---------------------------------------------------------------- data

export interface PointJob {
  statId: string
  n: number
  fromS: number
  toS: number
  kind: 'counter' | 'gauge'
}

/**
 * Inserts points with generate_series over two connections, with the points
 * indexes dropped and rebuilt afterwards (their definitions read back from the
 * catalog, so they come back exactly as the migrations made them) and, where
 * the role may, foreign-key triggers skipped for the loading sessions only.
 */
export async function loadPoints(
  databaseUrl: string,
  sql: Sql,
  jobs: PointJob[],
  say: (l: string) => void,
): Promise<{ rows: number; loadSeconds: number; indexSeconds: number; triggersSkipped: boolean }> {
  const CHUNK = 500_000
  const chunks: Array<{ job: PointJob; a: number; b: number }> = []
  for (const job of jobs) for (let a = 0; a < job.n; a += CHUNK) chunks.push({ job, a, b: Math.min(job.n, a + CHUNK) - 1 })
  const rows = jobs.reduce((s, j) => s + j.n, 0)
  const indexes = await sql<
    { indexname: string; indexdef: string }[]
  >`select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = 'points'`
  for (const ix of indexes) await sql.unsafe(`drop index "${ix.indexname}"`)
  const t0 = performance.now()
  let triggersSkipped = true
  let done = 0
  let lastSaid = Date.now()
  const loaders = [0, 1].map(async (w) => {
    const c = createSql(databaseUrl, { max: 1, applicationName: `metrics-bench-load-${w}` })
    try {
      await c`set synchronous_commit = off`
      // Superuser only: skips the per-row foreign-key check on points.stat_id (the stats exist; this only saves time).
      await c`set session_replication_role = replica`.catch(() => {
        triggersSkipped = false
      })
      for (let next = chunks.shift(); next; next = chunks.shift()) {
        const { job, a, b } = next
        const step = (job.toS - job.fromS) / job.n
        const value = job.kind === 'counter' ? c`1 + floor(random() * 5)` : c`floor(random() * 100000) / 100`
        await c`
          insert into points (stat_id, ts, value)
          select ${job.statId}::uuid, to_timestamp(${job.fromS}::float8 + floor(i * ${step}::float8)), ${value}
          from generate_series(${a}::int, ${b}::int) i`
        done += b - a + 1
        if (Date.now() - lastSaid > 10_000) {
          lastSaid = Date.now()
          say(`  ${done.toLocaleString('en-US')} of ${rows.toLocaleString('en-US')} points inserted`)
        }
      }
    } finally {
      await c.end({ timeout: 2 })
    }
  })
  await Promise.all(loaders)
  const loadSeconds = (performance.now() - t0) / 1000
  const t1 = performance.now()
  await sql.begin(async (tx) => {
    await tx`set local maintenance_work_mem = '256MB'`
    for (const ix of indexes) await tx.unsafe(ix.indexdef)
  })
  return { rows, loadSeconds, indexSeconds: (performance.now() - t1) / 1000, triggersSkipped }
}

/** The rollups refreshRollups would have produced for these stats' points (1 m from points, 1 h and 1 d from 1 m). */
export async function buildRollups(sql: Sql, ids: string[]): Promise<void> {
  await sql`
    insert into rollups_1m (stat_id, bucket, count, sum, min, max)
    select stat_id, date_bin('1 minute', ts, timestamptz 'epoch'), count(*), sum(value), min(value), max(value)
    from points where stat_id = any(${ids}::uuid[]) group by 1, 2`
  await sql`
    insert into rollups_1h (stat_id, bucket, count, sum, min, max)
    select stat_id, date_trunc('hour', bucket, 'UTC'), sum(count), sum(sum), min(min), max(max)
    from rollups_1m where stat_id = any(${ids}::uuid[]) group by 1, 2`
  await sql`
    insert into rollups_1d (stat_id, bucket, count, sum, min, max)
    select stat_id, date_trunc('day', bucket, 'UTC'), sum(count), sum(sum), min(min), max(max)
    from rollups_1m where stat_id = any(${ids}::uuid[]) group by 1, 2`
  await sql`
    insert into rollup_state (stat_id, refreshed_at) select unnest(${ids}::uuid[]), now()
    on conflict (stat_id) do update set refreshed_at = excluded.refreshed_at`
}

export async function insertStats(
  sql: Sql,
  accountId: string,
  stats: Array<{ name: string; kind: 'counter' | 'gauge' }>,
): Promise<string[]> {
  const rows = await sql<{ id: string; name: string }[]>`
    insert into stats (account_id, name, kind)
    select ${accountId}::uuid, n, k from unnest(${stats.map((s) => s.name)}::text[], ${stats.map((s) => s.kind)}::text[]) as u(n, k)
    returning id, name`
  const byName = new Map(rows.map((r) => [r.name, r.id]))
  return stats.map((s) => byName.get(s.name)!)
}

// ---------------------------------------------------------------- the bench

/** Runs the whole read bench and cleans up after itself whatever happens. */
export async function runReadsBench(options: ReadsBenchOptions = {}): Promise<ReadsBenchResults> {
  const { cfg, say, results, bench } = beginBench<Required<Omit<ReadsBenchOptions, 'log'>>, ReadsBenchResults>({
    tag: 'reads-bench',
    dbName: READS_DB_NAME,
    prefixLabel: 'benchreads',
    fromEnv: readsOptionsFromEnv(),
    options,
  })
  const problems = results.problems
  const { databaseUrl, redisUrl, redisPrefix, children, seen, stage } = bench
  let sql: Sql | undefined

  const startApi = async (name: string): Promise<{ child: Child; port: number }> => {
    const port = await freePort()
    const child = children.start(name, 'api/server.ts', {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      PUBLIC_URL: 'http://127.0.0.1',
    })
    seen.push(child)
    await waitForHttp200(`http://${HOST}:${port}/api/v1/health`, child)
    return { child, port }
  }

  try {
    // ---- database, accounts, data
    const tSetup = performance.now()
    say(`creating database ${READS_DB_NAME} and migrating`)
    sql = await bench.createDatabase('metrics-bench-reads')

    const nowS = Math.floor(Date.now() / 1000)
    const chartAcct = await createAccount(sql, 'chart')
    const [chartId] = await insertStats(sql, chartAcct.id, [{ name: 'bench.chart', kind: 'gauge' }])
    const dashAcct = await createAccount(sql, 'dashboard')
    const dashStats = Array.from({ length: cfg.dashboardStats }, (_, i) => ({
      name: `dash.s${String(i).padStart(4, '0')}`,
      kind: (i % 2 ? 'gauge' : 'counter') as 'counter' | 'gauge',
    }))
    const dashIds = await insertStats(sql, dashAcct.id, dashStats)
    const exportAccts: Array<{ size: number; key: string }> = []
    const jobs: PointJob[] = [
      // The chart: 180 days up to now, leaving the first hour out so that a window resolved a minute later still holds every point.
      { statId: chartId, n: cfg.chartPoints, fromS: nowS - 180 * DAY + 3600, toS: nowS, kind: 'gauge' },
      // The dashboard: the last day, less a quarter hour for the same reason.
      ...dashIds.map((id, i) => ({
        statId: id,
        n: cfg.dashboardPointsPerStat,
        fromS: nowS - DAY + 900,
        toS: nowS,
        kind: dashStats[i].kind,
      })),
    ]
    for (const size of cfg.exportSizes) {
      const acct = await createAccount(sql, `export-${size}`)
      const [id] = await insertStats(sql, acct.id, [{ name: `bench.export.${size}`, kind: 'gauge' }])
      exportAccts.push({ size, key: acct.key })
      jobs.push({ statId: id, n: size, fromS: nowS - 30 * DAY, toS: nowS, kind: 'gauge' })
    }
    // The history account: stat i holds 1-3 days of 1-50 points, its days hundreds of days apart across 800 days;
    // the first holds one point (the case).
    const histAcct = await createAccount(sql, 'history')
    const histIds = await insertStats(
      sql,
      histAcct.id,
      Array.from({ length: cfg.historyStats }, (_, i) => ({ name: `hist.s${String(i).padStart(3, '0')}`, kind: 'gauge' as const })),
    )
    const histDays: Array<{ id: string; day: number; i: number }> = []
    histIds.forEach((id, i) => {
      const days = [((i * 37) % 790) + 5, ((i * 37 + 300) % 790) + 5, ((i * 37 + 600) % 790) + 5].slice(0, 1 + (i % 3))
      for (const d of days) {
        const day = Math.floor(nowS / DAY) * DAY - d * DAY
        histDays.push({ id, day, i })
        jobs.push({ statId: id, n: i === 0 ? 1 : 1 + ((i * 7 + d) % 50), fromS: day + 60, toS: day + 80_000, kind: 'gauge' })
      }
    })
    const denseAcct = await createAccount(sql, 'dense')
    const denseIds = cfg.densePoints ? await insertStats(sql, denseAcct.id, [{ name: 'bench.dense', kind: 'gauge' }]) : []
    // The last 24 hours less a quarter hour, as the dashboard's.
    for (const id of denseIds) jobs.push({ statId: id, n: cfg.densePoints, fromS: nowS - DAY + 900, toS: nowS, kind: 'gauge' })
    // The group-by stat: a counter whose points are all in its tagged series (hosts), 30 days less an hour.
    const groupAcct = await createAccount(sql, 'grouped')
    const [groupParent] = cfg.groupSeries ? await insertStats(sql, groupAcct.id, [{ name: 'bench.grouped', kind: 'counter' }]) : []
    const groupIds = cfg.groupSeries
      ? (
          await sql<{ id: string }[]>`
          insert into stats (account_id, name, kind, parent_id, tags)
          select ${groupAcct.id}::uuid, 'bench.grouped', 'counter', ${groupParent}::uuid, jsonb_build_object('host', 'h' || lpad(i::text, 3, '0'))
          from generate_series(1, ${cfg.groupSeries}::int) as i returning id`
        ).map((r) => r.id)
      : []
    for (const id of groupIds)
      jobs.push({ statId: id, n: cfg.groupPointsPerSeries, fromS: nowS - 30 * DAY + 3600, toS: nowS, kind: 'counter' })
    // The reference: the same number of points over the same span in one untagged stat.
    const [groupOne] = cfg.groupSeries ? await insertStats(sql, groupAcct.id, [{ name: 'bench.grouped.one', kind: 'counter' }]) : []
    if (groupOne)
      jobs.push({
        statId: groupOne,
        n: cfg.groupSeries * cfg.groupPointsPerSeries,
        fromS: nowS - 30 * DAY + 3600,
        toS: nowS,
        kind: 'counter',
      })
    const total = jobs.reduce((s, j) => s + j.n, 0)
    say(
      `inserting ${total.toLocaleString('en-US')} points (chart ${cfg.chartPoints.toLocaleString('en-US')}, dashboard ${(cfg.dashboardStats * cfg.dashboardPointsPerStat).toLocaleString('en-US')}, export ${cfg.exportSizes.map((s) => s.toLocaleString('en-US')).join(' + ') || 'none'})`,
    )
    const loaded = await loadPoints(databaseUrl, sql, jobs, say)
    say(
      `  inserted in ${loaded.loadSeconds.toFixed(1)} s, indexes rebuilt in ${loaded.indexSeconds.toFixed(1)} s${loaded.triggersSkipped ? '' : ' (foreign-key triggers could not be skipped: not a superuser)'}`,
    )
    const t2 = performance.now()
    await buildRollups(sql, [chartId, ...dashIds, ...denseIds, ...groupIds, ...(groupOne ? [groupOne] : [])])
    // Every third history stat's days in day blocks, as the compaction leaves days past yesterday (not the first:
    // the stat of one point had no block).
    for (const { id, day, i } of histDays) if (i % 3 === 1) await compactDay(sql, id, new Date(day * 1000))
    const rollupSeconds = (performance.now() - t2) / 1000
    // The chart stat's sketches, every hour marked as a refresh would mark it, built by the refresh's own code.
    const tSketch = performance.now()
    await sql`insert into sketch_dirty (stat_id, hour) select stat_id, bucket from rollups_1h where stat_id = any(${[chartId, ...denseIds]}::uuid[]) and bucket < date_trunc('hour', now(), 'UTC')`
    while ((await refreshSketches(sql, 1_000)).hours > 0);
    const buildSeconds = (performance.now() - tSketch) / 1000
    const [sz] = await sql<{ hours: number; days: number; h_avg: number; h_max: number; d_avg: number; d_max: number; total: string }[]>`
      select (select count(*) from sketches_1h where stat_id = ${chartId})::int as hours, (select count(*) from sketches_1d where stat_id = ${chartId})::int as days,
             (select avg(octet_length(sketch)) from sketches_1h where stat_id = ${chartId})::float8 as h_avg, (select max(octet_length(sketch)) from sketches_1h where stat_id = ${chartId}) as h_max,
             (select avg(octet_length(sketch)) from sketches_1d where stat_id = ${chartId})::float8 as d_avg, (select max(octet_length(sketch)) from sketches_1d where stat_id = ${chartId}) as d_max,
             ((select sum(octet_length(sketch)) from sketches_1h where stat_id = ${chartId}) + (select sum(octet_length(sketch)) from sketches_6h where stat_id = ${chartId})
               + (select sum(octet_length(sketch)) from sketches_1d where stat_id = ${chartId}))::bigint as total`
    results.sketches = {
      buildSeconds: round(buildSeconds, 1),
      hours: sz.hours,
      days: sz.days,
      hourBytesAvg: round(sz.h_avg, 0),
      hourBytesMax: sz.h_max,
      dayBytesAvg: round(sz.d_avg, 0),
      dayBytesMax: sz.d_max,
      totalBytes: Number(sz.total),
      bytesPerPoint: round(Number(sz.total) / cfg.chartPoints, 3),
      pointsPerHour: Math.round(cfg.chartPoints / sz.hours),
    }
    say(
      `  sketches of the chart stat built in ${buildSeconds.toFixed(1)} s: ${sz.hours} hours (avg ${Math.round(sz.h_avg)} B, max ${sz.h_max} B), ${sz.days} days (avg ${Math.round(sz.d_avg)} B, max ${sz.d_max} B), ${(Number(sz.total) / cfg.chartPoints).toFixed(3)} B per raw point`,
    )
    const t3 = performance.now()
    // What autovacuum would have done to a table this size long before anyone read it: statistics, visibility map, hint bits.
    await sql.unsafe(
      'vacuum (analyze) points, rollups_1m, rollups_1h, rollups_1d, rollup_pending, sketches_1h, sketches_6h, sketches_1d, sketch_dirty, stats',
    )
    // Flush the load's dirty pages now rather than in a checkpoint that lands in the middle of a measurement (superuser or pg_checkpoint only).
    await sql`checkpoint`.catch(() => {})
    const vacuumSeconds = (performance.now() - t3) / 1000
    say(`  rollups built in ${rollupSeconds.toFixed(1)} s, vacuum analyze and checkpoint ${vacuumSeconds.toFixed(1)} s`)
    results.setup = {
      seconds: round((performance.now() - tSetup) / 1000, 1),
      pointsInserted: loaded.rows,
      loadSeconds: round(loaded.loadSeconds, 1),
      indexSeconds: round(loaded.indexSeconds, 1),
      rollupSeconds: round(rollupSeconds, 1),
      vacuumSeconds: round(vacuumSeconds, 1),
      triggersSkipped: loaded.triggersSkipped,
    }

    // ---- chart and dashboard, one API process
    const api = await startApi('reads-api')
    try {
      results.chart = await stage('chart', async () => {
        const auth = { authorization: `Bearer ${chartAcct.key}` }
        const reads: ChartRead[] = []
        for (const range of [
          '180d',
          '7d',
          '1h',
          '30d',
          '30d&percentiles=95',
          '180d&percentiles=50,95,99',
          '7d&percentiles=95',
          '24h&percentiles=95',
        ]) {
          const path = `/api/v1/stats/bench.chart?range=${range}`
          const first = await get(api.port, path, auth)
          if (first.status !== 200)
            throw new Error(`GET ${path} answered HTTP ${first.status}: ${first.body.toString('utf8').slice(0, 300)}`)
          for (let i = 0; i < 4; i++) await get(api.port, path, auth) // warm-up
          const samples: number[] = []
          let last = first
          for (let i = 0; i < cfg.chartRequests; i++) {
            last = await get(api.port, path, auth)
            if (last.status !== 200) throw new Error(`GET ${path} answered HTTP ${last.status} on request ${i + 1}`)
            samples.push(last.ms)
          }
          const body = JSON.parse(last.body.toString('utf8')) as { points: Array<{ n: number }> }
          const points = body.points.reduce((s, p) => s + p.n, 0)
          reads.push({ range, latencyMs: latency(samples), buckets: body.points.length, points, bytes: last.body.length })
          say(
            `chart ${range}: p50 ${latency(samples).p50} ms, p99 ${latency(samples).p99} ms (${body.points.length} buckets, ${points.toLocaleString('en-US')} points)`,
          )
        }
        const r180 = reads.find((r) => r.range === '180d')!
        if (r180.points !== cfg.chartPoints)
          problems.push(`chart 180d: the buckets account for ${r180.points} points, ${cfg.chartPoints} are stored`)
        const p30 = reads.find((r) => r.range === '30d&percentiles=95')!
        return {
          reads,
          targetMs: READS_TARGETS.chart180dP50Ms,
          met: r180.latencyMs.p50 < READS_TARGETS.chart180dP50Ms,
          percentileMet: p30.latencyMs.p99 < READS_TARGETS.percentile30dP99Ms,
        }
      }).catch((err: Error) => ({ error: err.message }))

      // Where the 30d p95 read's time goes, in this process (no HTTP): the average chart read of the same window as
      // the reference, the whole percentile read, and its parts measured alone. Interleaved, so that the machine's
      // noise falls on all alike.
      results.percentileCost = await stage('percentile cost', async () => {
        const w = resolveWindow({ range: '30d' }, new Date())
        const ps = [{ key: 'p95', q: 0.95 }]
        const hourEdge = new Date(Math.floor(w.to.getTime() / 3_600_000) * 3_600_000)
        const periodEdge = new Date(Math.floor(hourEdge.getTime() / 21_600_000) * 21_600_000)
        const rows = await sql!<
          { bucket: Date; sketch: Uint8Array }[]
        >`select bucket, sketch from sketches_6h where stat_id = ${chartId} and bucket >= ${w.from} and bucket < ${periodEdge}`
        const parts: Record<string, () => Promise<unknown>> = {
          'average chart read (reference)': () => readBuckets(sql!, chartId, 'gauge', w),
          'percentile read (whole)': () => readPercentiles(sql!, chartId, w, ps),
          '6-hour sketches fetched (SQL + bytea)': () =>
            sql!`select bucket, sketch from sketches_6h where stat_id = ${chartId} and bucket >= ${w.from} and bucket < ${periodEdge}`,
          [`${rows.length} sketches merged + p95 (JS)`]: async () => {
            const out = new Map<number, Sketch>()
            for (const r of rows) {
              const t = r.bucket.getTime()
              let k = out.get(t)
              if (!k) out.set(t, (k = new Sketch()))
              k.mergeEncoded(r.sketch)
            }
            for (const k of out.values()) k.quantile(0.95)
          },
          'current hour raw, binned (SQL)': () =>
            sql!`select s, k, count(*)::int from (select ts, ${binOfSql(sql!)} from points where stat_id = ${chartId} and ts >= ${hourEdge} and ts < ${w.to}) x group by 1, 2`,
        }
        const samples = new Map<string, number[]>(Object.keys(parts).map((k) => [k, []]))
        for (let i = 0; i < 5; i++) for (const f of Object.values(parts)) await f()
        for (let i = 0; i < cfg.chartRequests; i++) {
          for (const [name, f] of Object.entries(parts)) {
            const t0 = performance.now()
            await f()
            samples.get(name)!.push(performance.now() - t0)
          }
        }
        const out = [...samples].map(([name, xs]) => ({ name, latencyMs: latency(xs) }))
        for (const o of out) say(`in process: ${o.name}: p50 ${o.latencyMs.p50} ms, p99 ${o.latencyMs.p99} ms`)
        return { parts: out }
      }).catch((err: Error) => ({ error: err.message }))

      results.dashboard = await stage('dashboard', async () => {
        const { token } = await createSession(sql!, dashAcct.id, 24)
        const headers = { cookie: `${SESSION_COOKIE}=${token}` }
        const path = '/api/v1/dashboard?range=24h'
        const first = await get(api.port, path, headers, 60_000)
        if (first.status !== 200) throw new Error(`GET ${path} answered HTTP ${first.status}: ${first.body.toString('utf8').slice(0, 300)}`)
        for (let i = 0; i < 2; i++) await get(api.port, path, headers, 60_000)
        const samples: number[] = []
        let last = first
        for (let i = 0; i < cfg.dashboardRequests; i++) {
          last = await get(api.port, path, headers, 60_000)
          if (last.status !== 200) throw new Error(`GET ${path} answered HTTP ${last.status} on request ${i + 1}`)
          samples.push(last.ms)
        }
        const body = JSON.parse(last.body.toString('utf8')) as { stats: Array<{ summary: { n: number } }> }
        const points = body.stats.reduce((s, x) => s + x.summary.n, 0)
        const expectedPoints = cfg.dashboardStats * cfg.dashboardPointsPerStat
        if (body.stats.length !== cfg.dashboardStats)
          problems.push(`dashboard: ${body.stats.length} stats in the answer, the account has ${cfg.dashboardStats}`)
        if (points !== expectedPoints)
          problems.push(`dashboard: summaries count ${points} points, ${expectedPoints} are stored in the range`)
        const lat = latency(samples)
        say(`dashboard of ${body.stats.length} stats: p50 ${lat.p50} ms, p99 ${lat.p99} ms, ${(last.body.length / 1e6).toFixed(2)} MB`)
        return { stats: body.stats.length, latencyMs: lat, bytes: last.body.length, points, expectedPoints }
      }).catch((err: Error) => ({ error: err.message }))

      if (cfg.historyStats) {
        results.history = await stage('history export', async () => {
          const auth = { authorization: `Bearer ${histAcct.key}` }
          const all: number[] = []
          const one: number[] = []
          let rows = 0
          // A stat of one point, for the case (the first such by name).
          const [lone] = await sql!<{ name: string }[]>`
            select s.name from stats s where s.account_id = ${histAcct.id} and (select count(*) from points where stat_id = s.id) + coalesce((select sum(n) from point_blocks where stat_id = s.id), 0) = 1 order by s.name limit 1`
          for (let i = 0; i < cfg.historyRequests; i++) {
            const r = await get(api.port, '/api/v1/export?format=csv', auth, 30 * 60_000)
            if (r.status !== 200) throw new Error(`GET /api/v1/export answered HTTP ${r.status}`)
            all.push(r.ms)
            rows = r.body.toString('utf8').trimEnd().split('\n').length - 2
            if (lone) {
              const o = await get(api.port, `/api/v1/export?format=csv&stat=${lone.name}`, auth, 5 * 60_000)
              if (o.status !== 200) throw new Error(`GET /api/v1/export?stat= answered HTTP ${o.status}`)
              one.push(o.ms)
            }
          }
          const [{ stored, blocks }] = await sql!<{ stored: number; blocks: number }[]>`
            select ((select count(*) from points where stat_id = any(${histIds}::uuid[])) + (select coalesce(sum(n), 0) from point_blocks where stat_id = any(${histIds}::uuid[])))::int as stored,
                   (select count(*) from point_blocks where stat_id = any(${histIds}::uuid[]))::int as blocks`
          if (rows !== stored) problems.push(`history export: ${rows} rows received, ${stored} stored`)
          say(
            `history export of ${cfg.historyStats} stats (${stored} points, ${blocks} day blocks): p50 ${latency(all).p50} ms, max ${latency(all).max} ms; one stat of one point: p50 ${latency(one).p50} ms`,
          )
          return { stats: cfg.historyStats, points: stored, blocks, all: latency(all), one: latency(one), rows }
        }).catch((err: Error) => ({ error: err.message }))
      }

      if (denseIds.length) {
        results.dense = await stage('dense percentiles', async () => {
          const auth = { authorization: `Bearer ${denseAcct.key}` }
          const ps = [1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9]
          const path = `/api/v1/stats/bench.dense?range=24h&percentiles=${ps.join(',')}`
          const first = await get(api.port, path, auth, 120_000)
          if (first.status !== 200)
            throw new Error(`GET ${path} answered HTTP ${first.status}: ${first.body.toString('utf8').slice(0, 300)}`)
          const sequential: number[] = []
          let last = first
          for (let i = 0; i < cfg.denseRequests; i++) {
            last = await get(api.port, path, auth, 120_000)
            sequential.push(last.ms)
          }
          const concurrent = (await Promise.all([0, 1, 2, 3].map(() => get(api.port, path, auth, 120_000)))).map((r) => r.ms)
          // Exact nearest-rank of each 15-minute bucket's points, against the answer.
          const body = JSON.parse(last.body.toString('utf8')) as { points: Array<Record<string, number>> }
          const exact = await sql!<{ t: number; v: number[] }[]>`
            select (floor(date_part('epoch', ts) / 900) * 900)::float8 as t, percentile_disc(${ps.map((p) => p / 100)}::float8[]) within group (order by value) as v
            from points where stat_id = ${denseIds[0]} group by 1`
          const byT = new Map(exact.map((r) => [Number(r.t), r.v.map(Number)]))
          let worst = 0
          for (const b of body.points) {
            const want = byT.get(b.t)
            if (!want || !b.n) continue
            ps.forEach((p, i) => {
              const got = b[`p${p}`]
              const err = want[i] === 0 ? Math.abs(got) : Math.abs(got - want[i]) / Math.abs(want[i])
              worst = Math.max(worst, err)
            })
          }
          if (worst > 0.01 + 1e-12) problems.push(`dense percentiles: worst relative error ${worst} over the sketch's 1 %`)
          const [{ minutes }] = await sql!<
            { minutes: number }[]
          >`select count(*)::int as minutes from sketches_1m where stat_id = ${denseIds[0]}`.catch(() => [{ minutes: 0 }])
          say(
            `dense gauge 24h, ${ps.length} percentiles: p50 ${latency(sequential).p50} ms, max ${latency(sequential).max} ms; four at once: mean ${latency(concurrent).mean} ms, max ${latency(concurrent).max} ms; worst error ${(worst * 100).toFixed(3)} %`,
          )
          return {
            points: cfg.densePoints,
            minuteSketches: minutes,
            sequential: latency(sequential),
            concurrent: latency(concurrent),
            worstRelativeError: worst,
            buckets: body.points.length,
          }
        }).catch((err: Error) => ({ error: err.message }))
      }
      if (cfg.groupSeries) {
        results.groupBy = await stage('group-by read', async () => {
          const auth = { authorization: `Bearer ${groupAcct.key}` }
          const paths = {
            whole: '/api/v1/stats/bench.grouped?range=30d',
            grouped: '/api/v1/stats/bench.grouped?range=30d&group_by=host',
            one: '/api/v1/stats/bench.grouped.one?range=30d',
          }
          const kinds = ['whole', 'grouped', 'one'] as const
          const samples = { whole: [] as number[], grouped: [] as number[], one: [] as number[] }
          const cpu = { whole: 0, grouped: 0, one: 0 }
          let groups = 0
          const counted = { whole: 0, one: 0 }
          for (const which of kinds) {
            for (let i = 0; i < 3; i++) await get(api.port, paths[which], auth, 60_000)
          }
          // What a request cost in CPU: the API process and the PostgreSQL backends serving it (not the bench's own).
          const pids = async () => [
            api.child.proc.pid!,
            ...(
              await sql!<{ pid: number }[]>`
              select pid from pg_stat_activity where datname = current_database() and application_name = 'metrics-web'`
            ).map((r) => r.pid),
          ]
          // In turn, so that all three see the same machine.
          for (let i = 0; i < cfg.groupRequests; i++) {
            const ps = await pids()
            for (const which of kinds) {
              const c0 = processCpuMs(ps)
              const r = await get(api.port, paths[which], auth, 60_000)
              cpu[which] += processCpuMs(ps) - c0
              if (r.status !== 200)
                throw new Error(`GET ${paths[which]} answered HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`)
              samples[which].push(r.ms)
              const body = JSON.parse(r.body.toString('utf8')) as { points: Array<{ n: number }>; groups?: unknown[] }
              if (which === 'grouped') groups = body.groups?.length ?? 0
              else counted[which] = body.points.reduce((a, b) => a + b.n, 0)
            }
          }
          const expected = cfg.groupSeries * cfg.groupPointsPerSeries
          if (counted.whole !== expected) problems.push(`group-by: the whole read counts ${counted.whole} points, ${expected} are stored`)
          if (counted.one !== expected) problems.push(`group-by: the reference read counts ${counted.one} points, ${expected} are stored`)
          const [whole, grouped, one] = kinds.map((k) => latency(samples[k]))
          const cpuMs = {
            whole: round(cpu.whole / cfg.groupRequests, 2),
            grouped: round(cpu.grouped / cfg.groupRequests, 2),
            one: round(cpu.one / cfg.groupRequests, 2),
          }
          const ratioP50 = round(grouped.p50 / whole.p50, 2)
          const ratioP99 = round(grouped.p99 / whole.p99, 2)
          const wholeToOneP50 = round(whole.p50 / one.p50, 2)
          const wholeToOneP99 = round(whole.p99 / one.p99, 2)
          say(
            `30d read of ${cfg.groupSeries} series: whole p50 ${whole.p50} ms p99 ${whole.p99} ms (CPU ${cpuMs.whole} ms); group_by=host (${groups} groups) p50 ${grouped.p50} ms p99 ${grouped.p99} ms (CPU ${cpuMs.grouped} ms); one stat of the same points p50 ${one.p50} ms p99 ${one.p99} ms (CPU ${cpuMs.one} ms); grouped / whole p50 ${ratioP50}x p99 ${ratioP99}x; whole / one p50 ${wholeToOneP50}x p99 ${wholeToOneP99}x`,
          )
          return {
            series: cfg.groupSeries,
            points: counted.whole,
            groups,
            whole,
            grouped,
            one,
            cpuMs,
            ratioP50,
            ratioP99,
            wholeToOneP50,
            wholeToOneP99,
          }
        }).catch((err: Error) => ({ error: err.message }))
      }
    } finally {
      await api.child.stop()
    }

    // ---- export, a fresh API process per run
    if (cfg.exportSizes.length) {
      results.export = await stage('export', async () => {
        const runs: ExportRun[] = []
        for (const { size, key } of exportAccts) {
          for (const format of cfg.exportFormats) {
            const a = await startApi(`reads-api-export-${size}-${format}`)
            const rssBefore = memoryOf(a.child.proc.pid!)
            const path = `/api/v1/export?format=${format}`
            // Generous: a fifth of the target rate, at least a minute.
            const timeoutMs = Math.max(60_000, (size / (READS_TARGETS.exportRowsPerSec / 5)) * 1000)
            const run: ExportRun = {
              format,
              rowsStored: size,
              rowsReceived: 0,
              complete: false,
              status: 0,
              seconds: 0,
              rowsPerSec: 0,
              megabytes: 0,
              timeToFirstByteMs: 0,
              rssBeforeMb: rssBefore.rssMb,
              peakRssMb: NaN,
            }
            try {
              const r = await streamGet(a.port, path, { authorization: `Bearer ${key}` }, timeoutMs)
              run.status = r.status
              run.seconds = round(r.ms / 1000, 2)
              run.megabytes = round(r.bytes / 1e6, 1)
              run.timeToFirstByteMs = round(r.ttfbMs, 1)
              if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.head.slice(0, 200)}`)
              if (format === 'csv') {
                // Header row, one line per row, then the "# requested_range=..." line.
                run.rowsReceived = r.newlines - 2
                const lastLine = r.tail.trimEnd().split('\n').pop() ?? ''
                run.complete =
                  run.rowsReceived === size &&
                  lastLine.startsWith('# requested_range=') &&
                  r.head.startsWith('stat,kind,timestamp,iso_time,value,tags\n')
                if (!lastLine.startsWith('# '))
                  problems.push(
                    `export ${size} csv: the body does not end with the "# requested_range=" line (ends "${lastLine.slice(-80)}")`,
                  )
              } else {
                // One object for the head, one per stat (one here), one per point.
                run.rowsReceived = r.braces - 2
                run.complete = run.rowsReceived === size && r.tail.trimEnd().endsWith(']}]}')
                if (!r.tail.trimEnd().endsWith(']}]}'))
                  problems.push(`export ${size} json: the body does not end as a complete document (ends "${r.tail.slice(-80)}")`)
              }
              run.rowsPerSec = Math.round(run.rowsReceived / (r.ms / 1000))
              if (run.rowsReceived !== size) problems.push(`export ${size} ${format}: ${run.rowsReceived} rows received, ${size} stored`)
            } catch (err) {
              run.error = (err as Error).message
              problems.push(`export ${size} ${format}: ${run.error}`)
            }
            run.peakRssMb = a.child.exited ? NaN : memoryOf(a.child.proc.pid!).hwmMb
            if (a.child.exited)
              problems.push(
                `export ${size} ${format}: the API process exited during the export (code ${a.child.exited.code}, signal ${a.child.exited.signal})`,
              )
            await a.child.stop()
            runs.push(run)
            say(
              `export ${size.toLocaleString('en-US')} ${format}: ${run.rowsReceived.toLocaleString('en-US')} rows in ${run.seconds} s = ${run.rowsPerSec.toLocaleString('en-US')} rows/s (first byte after ${run.timeToFirstByteMs} ms), ${run.megabytes} MB; API RSS ${run.rssBeforeMb} MB before, peak ${run.peakRssMb} MB`,
            )
          }
        }
        // Memory flat in rows: the largest export's peak against the smallest's, format by format.
        const notes: string[] = []
        for (const format of cfg.exportFormats) {
          const byFormat = runs.filter((r) => r.format === format && !r.error).sort((x, y) => x.rowsStored - y.rowsStored)
          if (byFormat.length < 2) continue
          const lo = byFormat[0]
          const hi = byFormat[byFormat.length - 1]
          const growth = round(hi.peakRssMb - lo.peakRssMb, 1)
          notes.push(
            `${format}: peak ${lo.peakRssMb} MB at ${lo.rowsStored.toLocaleString('en-US')} rows, ${hi.peakRssMb} MB at ${hi.rowsStored.toLocaleString('en-US')} (${growth >= 0 ? '+' : ''}${growth} MB)`,
          )
          // Flat: the bigger export may not take more than a quarter more peak memory (or 40 MB, whichever is more) for several times the rows.
          if (growth > Math.max(40, lo.peakRssMb * 0.25))
            problems.push(
              `export ${format}: the API's peak RSS grew with the row count (${lo.peakRssMb} MB at ${lo.rowsStored} rows, ${hi.peakRssMb} MB at ${hi.rowsStored})`,
            )
        }
        return { runs, targetRowsPerSec: READS_TARGETS.exportRowsPerSec, memoryNote: notes.join('; ') }
      }).catch((err: Error) => ({ error: err.message }))
    }

    for (const c of seen) {
      if (c.warnings)
        problems.push(
          `${c.name} wrote ${c.warnings} warning/error log line(s), e.g. ${c.lines
            .slice(0, 2)
            .map((l) => l.slice(0, 300))
            .join(' | ')}`,
        )
    }
    for (const [name, x] of [
      ['chart', results.chart],
      ['dashboard', results.dashboard],
      ['export', results.export],
      ['history', results.history],
      ['dense', results.dense],
      ['group-by', results.groupBy],
    ] as const) {
      if (isFailed(x)) problems.push(`${name} FAILED: ${x.error}`)
    }
    return results
  } finally {
    results.finishedAt = new Date().toISOString()
    agent.destroy() // idle keep-alive sockets would otherwise hold an importing process open
    await bench.close()
  }
}

// ---------------------------------------------------------------- report

export function renderReadsReport(r: ReadsBenchResults): string {
  const rows: string[][] = [['figure', 'measured', 'target', '']]
  const ms = (x: number) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(1) : String(Math.round(x))) : '-')
  const n = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-')
  const c = r.config
  if (r.chart && !isFailed(r.chart)) {
    for (const read of r.chart.reads) {
      const is180 = read.range === '180d'
      const isP30 = read.range === '30d&percentiles=95'
      const [target, met] = is180
        ? [`p50 < ${r.chart.targetMs} ms`, r.chart.met]
        : isP30
          ? [`p99 < ${READS_TARGETS.percentile30dP99Ms} ms`, r.chart.percentileMet]
          : ['', undefined]
      rows.push([
        `chart ${read.range} (${n(c.chartPoints)} pts) p50 / p99 ms`,
        `${ms(read.latencyMs.p50)} / ${ms(read.latencyMs.p99)}`,
        target,
        met === undefined ? '' : met ? 'met' : 'NOT MET',
      ])
    }
    const avg30 = r.chart.reads.find((x) => x.range === '30d')
    const p30 = r.chart.reads.find((x) => x.range === '30d&percentiles=95')
    if (avg30 && p30) {
      rows.push([
        'chart 30d p95 / 30d average, same run (ratio)',
        `p50 ${(p30.latencyMs.p50 / avg30.latencyMs.p50).toFixed(2)}x, p99 ${(p30.latencyMs.p99 / avg30.latencyMs.p99).toFixed(2)}x`,
        '',
        '',
      ])
    }
  } else rows.push(['chart', r.chart ? `FAILED: ${r.chart.error.slice(0, 100)}` : 'not run', '', ''])
  if (r.percentileCost && !isFailed(r.percentileCost)) {
    for (const part of r.percentileCost.parts)
      rows.push([`  in process: ${part.name} p50 / p99 ms`, `${ms(part.latencyMs.p50)} / ${ms(part.latencyMs.p99)}`, '', ''])
  }
  if (r.dashboard && !isFailed(r.dashboard)) {
    rows.push([
      `dashboard 24h (${n(r.dashboard.stats)} stats) p50 / p99 ms`,
      `${ms(r.dashboard.latencyMs.p50)} / ${ms(r.dashboard.latencyMs.p99)}`,
      '(no figure)',
      '',
    ])
  } else rows.push(['dashboard', r.dashboard ? `FAILED: ${r.dashboard.error.slice(0, 100)}` : 'not run', '', ''])
  if (r.export && !isFailed(r.export)) {
    for (const e of r.export.runs) {
      const ok = !e.error && e.complete && e.rowsPerSec >= r.export.targetRowsPerSec
      rows.push([
        `export ${n(e.rowsStored)} ${e.format} rows/s`,
        e.error ? `FAILED` : n(e.rowsPerSec),
        `>= ${n(r.export.targetRowsPerSec)}`,
        e.error ? '' : ok ? 'met' : 'NOT MET',
      ])
      rows.push([
        `  rows received, MB, seconds`,
        `${n(e.rowsReceived)}${e.complete ? '' : ' (INCOMPLETE)'}, ${e.megabytes}, ${e.seconds}`,
        '',
        '',
      ])
      rows.push([`  API RSS before / peak MB`, `${e.rssBeforeMb} / ${e.peakRssMb}`, 'flat in rows', ''])
    }
  } else if (r.export) rows.push(['export', `FAILED: ${r.export.error.slice(0, 100)}`, '', ''])
  if (r.history && !isFailed(r.history)) {
    const h = r.history
    rows.push([
      `history export, ${n(h.stats)} stats over 800 days (${n(h.points)} pts) p50 / max ms`,
      `${ms(h.all.p50)} / ${ms(h.all.max)}`,
      'what its points cost',
      '',
    ])
    rows.push([`  one stat of one point, full history p50 / max ms`, `${ms(h.one.p50)} / ${ms(h.one.max)}`, '', ''])
  } else if (r.history) rows.push(['history export', `FAILED: ${r.history.error.slice(0, 100)}`, '', ''])
  if (r.dense && !isFailed(r.dense)) {
    const d = r.dense
    rows.push([
      `24h, 10 percentiles, gauge of ${n(d.points)} pts p50 / max ms`,
      `${ms(d.sequential.p50)} / ${ms(d.sequential.max)}`,
      '',
      '',
    ])
    rows.push([`  four at once, mean / max ms`, `${ms(d.concurrent.mean)} / ${ms(d.concurrent.max)}`, '', ''])
    rows.push([
      `  worst relative error against exact (${n(d.buckets)} buckets)`,
      `${(d.worstRelativeError * 100).toFixed(3)} %`,
      '<= 1 %',
      d.worstRelativeError <= 0.01 + 1e-12 ? 'met' : 'NOT MET',
    ])
  } else if (r.dense) rows.push(['dense percentiles', `FAILED: ${r.dense.error.slice(0, 100)}`, '', ''])
  if (r.groupBy && !isFailed(r.groupBy)) {
    const g = r.groupBy
    rows.push([
      `30d, stat of ${n(g.series)} series (${n(g.points)} pts) as a whole p50 / p99 ms`,
      `${ms(g.whole.p50)} / ${ms(g.whole.p99)}`,
      '',
      '',
    ])
    rows.push([
      `  group_by=host (${n(g.groups)} groups) p50 / p99 ms`,
      `${ms(g.grouped.p50)} / ${ms(g.grouped.p99)}`,
      'p99 < 100 ms',
      g.grouped.p99 < 100 ? 'met' : 'NOT MET',
    ])
    rows.push([`  one untagged stat of the same points p50 / p99 ms`, `${ms(g.one.p50)} / ${ms(g.one.p99)}`, '', ''])
    rows.push([
      `  CPU per request (API + backends) whole / grouped / one ms`,
      `${g.cpuMs.whole} / ${g.cpuMs.grouped} / ${g.cpuMs.one}`,
      '',
      '',
    ])
    rows.push([
      `  group_by / whole (p50, p99)`,
      `${g.ratioP50}x, ${g.ratioP99}x`,
      '<= 2x',
      g.ratioP50 <= 2 && g.ratioP99 <= 2 ? 'met' : 'NOT MET',
    ])
    rows.push([`  whole / one stat (p50, p99)`, `${g.wholeToOneP50}x, ${g.wholeToOneP99}x`, '', ''])
  } else if (r.groupBy) rows.push(['group-by read', `FAILED: ${r.groupBy.error.slice(0, 100)}`, '', ''])
  const out = ['', machineLine('reads', r.machine)]
  if (r.setup)
    out.push(
      `setup: ${n(r.setup.pointsInserted)} points in ${r.setup.loadSeconds} s, indexes ${r.setup.indexSeconds} s, rollups ${r.setup.rollupSeconds} s, vacuum analyze + checkpoint ${r.setup.vacuumSeconds} s (${r.setup.seconds} s in all)`,
    )
  if (r.sketches) {
    const k = r.sketches
    out.push(
      `sketches (chart stat, ${n(k.pointsPerHour)} points an hour): built in ${k.buildSeconds} s; ${n(k.hours)} hours avg ${k.hourBytesAvg} B (max ${k.hourBytesMax}), ${n(k.days)} days avg ${k.dayBytesAvg} B (max ${k.dayBytesMax}); ${n(k.totalBytes)} B in all = ${k.bytesPerPoint} B per raw point`,
    )
  }
  out.push('', ...tableLines(rows))
  if (r.export && !isFailed(r.export) && r.export.memoryNote) out.push('', `export memory: ${r.export.memoryNote}`)
  out.push(...busyLines(r.othersCpuPct), ...closingLines(r.problems, 'Nothing looked wrong: every answer complete, no warnings logged.'))
  return out.join('\n')
}

// ---------------------------------------------------------------- standalone

if (isMain(import.meta.url)) await runStandalone('reads-bench', 'reads bench', () => runReadsBench(), renderReadsReport)
