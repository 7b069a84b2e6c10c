// `npm run bench`: the write-path benchmark of docs/decisions.md §D-T
// Not a test: it prints figures, ratios against references measured
// in the same run, and the targets beside them. Bounded in time (BENCH_SECONDS
// per phase, default 10; about 2 minutes in all on a quiet machine, at most
// about 4 with the waits for a quiet machine) and local only: every request
// goes to 127.0.0.1, PostgreSQL and Redis must be on this machine.
//
// Order: fresh database `metrics_bench` and Redis prefix -> the service starts
// (web processes + 1 worker, idle meanwhile) -> reference A (bare Koa in as
// many processes as the service's web tier, same load) -> the peer reference,
// InfluxDB 1.x (bench/influx-ref.ts: installed when missing and allowed,
// else a skip line; its own ports and /tmp directory), single-point line
// protocol writes under the same load -> phase 1 single /ez
// writes -> reference A again -> reference B (COPY over 2 connections, one
// 100-row COPY per batch; and, for context, one streaming COPY) -> InfluxDB
// with 100 points per request -> phase 2 100-point batches -> reference B again ->
// phase 3 write-to-visible probes under phase-1 load -> table and
// bench/last-results.json -> cleanup (always, also on SIGINT/SIGTERM).
// Phases F1 and F2 run phase 1's and phase 2's load again with the worker paused (SIGSTOP) for the
// measured window: what the front end alone (HTTP, key, rate limit, validation, quota, the durable enqueue)
// answers when storing costs nothing, the ceiling no storage change can lift. The worker then resumes and
// every accepted point is checked stored, as in the other phases.
// It adds, after phase V: InfluxDB taking 5,000-line requests, then phase L, the same requests of
// line protocol on /api/v2/write (both still inside reference B's bracket), and phase S, StatsD counters
// over UDP at BENCH_STATSD_RATE (20,000) metrics a second with the share that never got stored.
// Then two pairs, each side on series created beforehand, measured as CPU per point end to end (the web
// processes, the worker, and the PostgreSQL backends of the service's own connections to the bench database,
// until the points are stored and a rollup pass has folded them): phase T, single v1 writes and 1,000-point v1
// batches of points with 3 tags against the same without tags, over as many series (docs/decisions.md §24);
// phase O, OTLP/HTTP protobuf requests as the OpenTelemetry exporter sends them (8 gauges of 25 attribute sets)
// against /api/v1/points batches of the same 200 points (docs/decisions.md §25). In each pair the reference runs
// before and after the subject, and the ratio uses the mean of the two.
// Each reference runs right before the phase it is the bar for and again right
// after it, so that the pair sees the same machine (another session's test run
// comes and goes); ratios use the mean of the two.
//
// Two web processes on two ports (the load generator spreads connections over
// both), like the Koa reference of docs/decisions.md §D-T; the Koa reference
// gets the same two processes and the very same requests.
//
// The service runs as production runs it (`npm start`, `npm run worker`): compiled by `npm run build`
// at the start of each run, on plain node. BENCH_FROM_SOURCE=1 runs the TypeScript sources through tsx
// instead (CPU profiles then name the .ts files; tsx's transform adds a little work per closure).
//
// Env: BENCH_SECONDS (10), BENCH_CONNECTIONS (64), BENCH_ACCOUNTS (16),
// BENCH_WEB_PROCESSES (2), BENCH_NODE_ARGS (extra node flags for the service's
// processes, e.g. --cpu-prof), BENCH_PHASES (A,B,I,1,F,2,V,L,S,T,O,3: the parts to run; F is F1 and F2, the front end alone; T tagged
// against untagged points, O OTLP against v1 batches; L is 5,000-line
// line-protocol requests, S StatsD over UDP; V is
// 1,000-point batches on the v1 API, run after phase 2 inside the COPY reference's bracket; I is
// InfluxDB), BENCH_INFLUX (0: skip InfluxDB),
// BENCH_WAIT_QUIET (15: seconds to wait, before each stage, for the machine to
// be mostly idle; 0 = don't), DATABASE_URL (server only; postgres://localhost),
// REDIS_URL (redis://127.0.0.1:6379).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { PLANS } from '../shared/plans.js'
import { envInt as int, isFailed, logger, type Failed, machineInfo, onStopSignals, teardown } from './common.js'
import { runCopyReference } from './copy-ref.js'
import { InfluxRef } from './influx-ref.js'
import type { CopyResult } from './copy-ref.js'
import type { LoadResult, Target } from './load.js'
import { addSelfReported, cpuDuring, processCpuMs, waitForQuiet, type CpuUsage } from './machine.js'
import { runProbes } from './probe.js'
import { buildDist, Children, freePort, HOST, ROOT, waitForHttp200, type Child } from './procs.js'
import { meanOf, renderReport, TARGETS, type PairResult, type PerPointCpu, type PhaseResult, type Results } from './report.js'
import {
  activityDelta,
  countPoints,
  createAccounts,
  createBenchDatabase,
  dbActivity,
  DB_NAME,
  serverUrl,
  waitForDrain,
  type BenchAccount,
  type BenchEnv,
} from './setup.js'
import { sleep } from './stats.js'
import {
  batchGroups,
  lineProtocolGroups,
  lineProtocolStatNames,
  otlpExportBody,
  otlpGroups,
  phaseSeries,
  runLoadProcess,
  singleGroups,
  v1BatchGroups,
  v1Points,
  v1SeriesBatchGroups,
  v1SingleGroups,
} from './workloads.js'
import { convertOtlp, decodeOtlp } from '../shared/ingest/protocols/otlp.js'
import { createStats, type Kind } from '../shared/stats/repo.js'
import type { RequestSpec } from './load.js'
import { sendStatsd, udpReceiveDrops, type StatsdPhase } from './statsd-load.js'

const SECONDS = int('BENCH_SECONDS', 10, 1)
const CONNECTIONS = int('BENCH_CONNECTIONS', 64, 1)
const ACCOUNTS = int('BENCH_ACCOUNTS', 16, 1)
const WEB = int('BENCH_WEB_PROCESSES', 2, 1)
const STATS = 8
const BATCH = 100
const V1_BATCH = 1000
const LP_LINES = 5000
const STATSD_RATE = int('BENCH_STATSD_RATE', 20_000, 1)
// Phase T's batches, and phase O's requests: OTLP_METRICS gauges of OTLP_SERIES attribute sets each.
const TAGGED_BATCH = 1000
const OTLP_METRICS = 8
const OTLP_SERIES = 25
const WARMUP_MS = Math.min(2000, SECONDS * 250)
// Before each stage, wait up to this long for a second in which other processes use under 20% of the machine: 0 turns it off.
const QUIET_WAIT_MS = int('BENCH_WAIT_QUIET', 15, 0) * 1000
// Which parts to run (all by default): A, B, 1, 2, 3, comma-separated. Skipped parts print as "skipped".
const PHASES = new Set(
  (process.env.BENCH_PHASES || 'A,B,I,1,F,2,V,L,S,T,O,3')
    .toUpperCase()
    .split(',')
    .map((x) => x.trim()),
)
// Extra node flags for the service's processes, e.g. "--cpu-prof --cpu-prof-dir=bench/logs/prof".
const SERVICE_NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)
const RESULTS_FILE = join(ROOT, 'bench', 'last-results.json')
const FROM_SOURCE = process.env.BENCH_FROM_SOURCE === '1'

const children = new Children()
let env: BenchEnv | undefined
let influx: InfluxRef | undefined
let cleaning: Promise<void> | undefined

const say = logger('bench')

const cpuByStage: Record<string, CpuUsage> = {}
const quietness: Record<string, { waitedMs: number; othersPct: number; quiet: boolean }> = {}

/** Runs one stage and records how busy the machine was meanwhile, and with what. */
async function measured<T>(stage: string, run: () => Promise<T>, loadOf?: (r: T) => LoadResult): Promise<T> {
  if (QUIET_WAIT_MS > 0) {
    const q = await waitForQuiet(QUIET_WAIT_MS, children.pids)
    quietness[stage] = q
    if (!q.quiet)
      say(
        `${stage}: other processes kept the machine busy (${q.othersPct}% of all cores) for ${Math.round(q.waitedMs / 1000)} s; starting anyway`,
      )
    else if (q.waitedMs > 1500) say(`${stage}: waited ${Math.round(q.waitedMs / 1000)} s for the machine to be quiet`)
  }
  return cpuDuring(children.pids, run, (usage, result) => {
    // The load generator has exited by now: it reports its own CPU time.
    if (result !== undefined && loadOf) addSelfReported(usage, 'load generator', loadOf(result).cpuMs)
    cpuByStage[stage] = usage
  })
}

/** Stops every child, drops the database, deletes the Redis keys. Safe to call twice. */
function cleanup(): Promise<void> {
  cleaning ??= (influx?.stop() ?? Promise.resolve())
    .catch(() => {})
    .then(() =>
      teardown({
        children,
        sql: env?.sql,
        redis: env && { url: env.redisUrl, prefix: env.redisPrefix },
        dbName: DB_NAME,
        say,
        redisDone: (deleted) => `cleanup: stopped child processes, deleted ${deleted} Redis keys under ${env?.redisPrefix}:`,
        dropped: () => `cleanup: dropped database ${DB_NAME}`,
      }),
    )
  return cleaning
}

onStopSignals((sig) => {
  if (cleaning) return
  say(`${sig}: cleaning up`)
  void cleanup().finally(() => process.exit(130))
})
process.on('exit', () => {
  children.killAllNow()
  influx?.killNow()
})
process.on('unhandledRejection', (err) => {
  say(`unexpected failure: ${(err as Error)?.stack ?? err}`)
  void cleanup().finally(() => process.exit(1))
})

async function startWeb(
  script: string,
  name: string,
  extraEnv: (port: number) => Record<string, string>,
  nodeArgs: string[] = [],
): Promise<{ procs: Child[]; targets: Target[] }> {
  const procs: Child[] = []
  const targets: Target[] = []
  for (let i = 0; i < WEB; i++) {
    const port = await freePort()
    procs.push(children.start(`${name}-${i}`, script, { PORT: String(port), ...extraEnv(port) }, undefined, nodeArgs))
    targets.push({ host: HOST, port })
  }
  await Promise.all(procs.map((p, i) => waitForHttp200(`http://${HOST}:${targets[i].port}/api/v1/health`, p)))
  return { procs, targets }
}

function serviceEnv(e: BenchEnv): Record<string, string> {
  return {
    DATABASE_URL: e.databaseUrl,
    REDIS_URL: e.redisUrl,
    REDIS_PREFIX: e.redisPrefix,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    PUBLIC_URL: 'http://127.0.0.1',
  }
}

/** One write and one read through the service, so a missing route fails with a clear message instead of a table of errors. */
async function checkWriteRoutes(target: Target, account: BenchAccount, runId: string): Promise<{ write?: string; read?: string }> {
  const base = `http://${target.host}:${target.port}`
  const stat = `bench.check.${runId}`
  const res = await fetch(`${base}/ez`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `ezkey=${account.key}&stat=${stat}&count=1`,
  })
  const text = await res.text()
  let status: unknown
  try {
    status = (JSON.parse(text) as { status?: unknown }).status
  } catch {
    status = undefined
  }
  if (status !== 200) {
    const hint = res.status === 404 || res.status === 405 ? ' (the /ez route does not exist yet: api/routes/legacy.ts)' : ''
    return { write: `POST /ez answered HTTP ${res.status} ${text.slice(0, 200)}${hint}`, read: 'not checked' }
  }
  const until = Date.now() + 15_000
  let last = ''
  while (Date.now() < until) {
    const r = await fetch(`${base}/api/v1/stats/${stat}?range=1h`, { headers: { authorization: `Bearer ${account.key}` } })
    const body = await r.text()
    last = `HTTP ${r.status} ${body.slice(0, 200)}`
    if (r.status === 200) {
      try {
        if (Array.isArray((JSON.parse(body) as { points?: unknown }).points)) return {}
      } catch {
        /* keep polling */
      }
    }
    await sleep(200)
  }
  return { read: `GET /api/v1/stats/${stat}?range=1h never showed the checked point within 15 s (last: ${last})` }
}

function describeRejections(label: string, l: LoadResult, problems: string[]): void {
  const notAccepted = l.completed - l.accepted
  if (notAccepted > 0) {
    const top = l.rejections
      .slice(0, 4)
      .map((r) => `${r.count} x HTTP ${r.http} "${r.msg}"`)
      .join('; ')
    problems.push(
      `${label}: ${notAccepted.toLocaleString('en-US')} of ${l.completed.toLocaleString('en-US')} answers not accepted (${top})`,
    )
  }
  const errs = Object.entries(l.socketErrors)
  if (errs.length) problems.push(`${label}: socket errors ${errs.map(([k, v]) => `${k} x${v}`).join(', ')}`)
  if (l.timeouts) problems.push(`${label}: ${l.timeouts} requests timed out (no answer in 10 s)`)
  if (l.unanswered > 0) problems.push(`${label}: ${l.unanswered} requests sent without an answer (outcome unknown)`)
}

/**
 * The web processes' PostgreSQL round trips and Redis commands so far (shared/io-counts.ts: each prints
 * them on SIGUSR2), summed; undefined when one did not answer.
 */
async function ioCounts(web: Child[]): Promise<{ pg: number; redis: number; direct: number } | undefined> {
  const before = web.map((c) => c.lines.length)
  for (const c of web) c.proc.kill('SIGUSR2')
  const total = { pg: 0, redis: 0, direct: 0 }
  for (let i = 0; i < web.length; i++) {
    let found: { pgRoundTrips: number; redisCommands: number; directWrites?: number } | undefined
    for (let tries = 0; tries < 40 && !found; tries++) {
      const line = web[i].lines
        .slice(Math.max(0, before[i] - 1))
        .reverse()
        .find((l) => l.startsWith('{"io_counts"'))
      if (line && JSON.parse(line).io_counts.at >= Date.now() - 2000) found = JSON.parse(line).io_counts
      else await sleep(50)
    }
    if (!found) return undefined
    total.pg += found.pgRoundTrips
    total.redis += found.redisCommands
    total.direct += found.directWrites ?? 0
  }
  return total
}

let webProcs: Child[] = []
let workerProc: Child | undefined

/**
 * Watches the CPU time of `procs` over the measured window of a load (from its end of warm-up to its last
 * answer): per answered request, the steady-state cost, without the warm-up's first writes or the drain.
 * `start` goes to the load's onMeasure; `perRequest` is called once the load is over.
 */
function steadyCpu(procs: Child[]): { start: () => void; perRequest: (load: LoadResult) => number | undefined } {
  const pids = procs.map((p) => p.proc.pid).filter((pid): pid is number => pid !== undefined)
  let startMs: number | undefined
  return {
    start: () => void (startMs = processCpuMs(pids)),
    perRequest: (load) => (startMs === undefined || !load.completed ? undefined : ((processCpuMs(pids) - startMs) * 1000) / load.completed),
  }
}

/** Persist jobs applied so far and their points: how large the groups the web processes queue are. */
async function persistJobs(sql: BenchEnv['sql']): Promise<{ jobs: number; points: number }> {
  const [row] = await sql<
    { jobs: number; points: number }[]
  >`select count(*)::int as jobs, coalesce(sum(points), 0)::int as points from applied_batches`
  return row
}

type PhaseKind = 'single' | 'batch' | 'v1batch' | 'lines'

/** A phase's requests given outright (phases T and O): the measured load, its warm-up (on other series), points per request. */
interface CustomLoad {
  groups: RequestSpec[][]
  warm: RequestSpec[][]
  pointsPerRequest: number
}

/** CPU time so far of the processes a write passes through, and the points stored so far under the phase's prefix. */
interface TierSnapshot {
  web: number
  worker: number
  postgres: Map<number, number>
  stored: number
}

/** The PostgreSQL backends serving the service's own connections to the bench database (its web and worker pools). */
async function serviceBackends(sql: BenchEnv['sql']): Promise<number[]> {
  const rows = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = current_database() and application_name in ('metrics-web', 'metrics-worker')`
  return rows.map((r) => r.pid)
}

async function tierSnapshot(sql: BenchEnv['sql'], statPrefix: string): Promise<TierSnapshot> {
  const pids = (procs: Child[]) => procs.map((p) => p.proc.pid).filter((pid): pid is number => pid !== undefined)
  const web = processCpuMs(pids(webProcs))
  const worker = workerProc ? processCpuMs(pids([workerProc])) : 0
  const postgres = new Map((await serviceBackends(sql)).map((pid) => [pid, processCpuMs([pid])]))
  return { web, worker, postgres, stored: (await countPoints(sql, statPrefix)).rows }
}

/** CPU per point by tier between two snapshots (see PerPointCpu); a backend that connected meanwhile counts whole. */
function perPointCpu(a: TierSnapshot, b: TierSnapshot, accepted: number): PerPointCpu | undefined {
  const stored = b.stored - a.stored
  if (accepted <= 0 || stored <= 0) return undefined
  let pg = 0
  for (const [pid, ms] of b.postgres) pg += ms - (a.postgres.get(pid) ?? 0)
  const r1 = (x: number) => Math.round(x * 10) / 10
  const web = r1(((b.web - a.web) * 1000) / accepted)
  const worker = r1(((b.worker - a.worker) * 1000) / stored)
  const postgres = r1((pg * 1000) / stored)
  return { web, worker, postgres, total: r1(web + worker + postgres), accepted, stored }
}

/**
 * `paused`: a process stopped (SIGSTOP) for the measured window and resumed (SIGCONT) right after it, before the
 * drain: the worker, for phases F1 and F2.
 */
async function servicePhase(
  label: string,
  e: BenchEnv,
  targets: Target[],
  keys: string[],
  statPrefix: string,
  kind: PhaseKind | CustomLoad,
  problems: string[],
  paused?: Child,
): Promise<PhaseResult> {
  const custom = typeof kind === 'object' ? kind : undefined
  const groups = custom
    ? custom.groups
    : kind === 'single'
      ? singleGroups(keys, statPrefix, STATS)
      : kind === 'batch'
        ? batchGroups(keys, statPrefix, STATS, BATCH)
        : kind === 'lines'
          ? lineProtocolGroups(keys, statPrefix.replace(/\.$/, ''), STATS, LP_LINES)
          : v1BatchGroups(keys, statPrefix, STATS, V1_BATCH)
  const warm = custom
    ? custom.warm
    : kind === 'single'
      ? singleGroups(keys, 'bench.warm.', STATS)
      : kind === 'batch'
        ? batchGroups(keys, 'bench.warmb.', STATS, BATCH)
        : kind === 'lines'
          ? lineProtocolGroups(keys, 'bench.warml', STATS, LP_LINES)
          : v1BatchGroups(keys, 'bench.warmv.', STATS, V1_BATCH)
  say(`${label}: ${CONNECTIONS} connections for ${SECONDS} s (+${WARMUP_MS} ms warmup)`)
  const before = await dbActivity(e.sql)
  const jobsBefore = await persistJobs(e.sql)
  // Counted from the end of the warm-up (which creates the phase's stats: a first write's cost, not a steady one).
  let ioStart: Promise<{ pg: number; redis: number; direct: number } | undefined> = Promise.resolve(undefined)
  let tiersStart: Promise<TierSnapshot | undefined> = Promise.resolve(undefined)
  const cpu = steadyCpu(webProcs)
  let load: LoadResult
  try {
    load = await runLoadProcess(
      children,
      `load-${label.replace(/[^A-Za-z0-9.]+/g, '-')}`,
      {
        targets,
        connections: CONNECTIONS,
        warmup: { durationMs: WARMUP_MS, groups: warm },
        measure: { durationMs: SECONDS * 1000, groups },
      },
      () => {
        paused?.proc.kill('SIGSTOP')
        cpu.start()
        tiersStart = tierSnapshot(e.sql, statPrefix).catch(() => undefined)
        ioStart = ioCounts(webProcs)
      },
    )
  } finally {
    paused?.proc.kill('SIGCONT')
  }
  const webCpuUsPerRequest = cpu.perRequest(load)
  const ioBefore = await ioStart
  const ioAfter = await ioCounts(webProcs)
  const answered = load.completed || 1
  const io =
    ioBefore && ioAfter
      ? {
          pgPerRequest: (ioAfter.pg - ioBefore.pg) / answered,
          redisPerRequest: (ioAfter.redis - ioBefore.redis) / answered,
          directShare: (ioAfter.direct - ioBefore.direct) / answered,
        }
      : undefined
  const pointsPerRequest = custom
    ? custom.pointsPerRequest
    : kind === 'single'
      ? 1
      : kind === 'batch'
        ? BATCH
        : kind === 'lines'
          ? LP_LINES
          : V1_BATCH
  // A batch answer may say how many of its points it took; a single write takes one.
  const expected = pointsPerRequest > 1 && load.acceptedItems !== null ? load.acceptedItems : load.accepted * pointsPerRequest
  if (pointsPerRequest > 1 && load.acceptedItems !== null && load.acceptedItems !== load.accepted * pointsPerRequest) {
    problems.push(`${label}: accepted batch answers took ${load.acceptedItems} points, not ${load.accepted} x ${pointsPerRequest}`)
  }
  say(`${label}: ${load.accepted} accepted of ${load.completed}; waiting for ${expected} points to be stored`)
  const drain = await waitForDrain(e.sql, statPrefix, expected)
  // The rollup pass (every 2 s) folds what the points appended: part of what a point costs the worker and PostgreSQL.
  await sleep(custom ? 2500 : 1100) // PostgreSQL publishes its statistics at most once a second
  const tiersFrom = await tiersStart
  const perPoint = custom && tiersFrom ? perPointCpu(tiersFrom, await tierSnapshot(e.sql, statPrefix), expected) : undefined
  const db = activityDelta(before, await dbActivity(e.sql))
  const jobsAfter = await persistJobs(e.sql)
  const storedPointsPerSec = Math.round((drain.rows / Math.max(1, drain.lastStoredAt - load.firstSendAt)) * 1000)
  const result: PhaseResult = {
    load,
    drain,
    pointsPerRequest,
    acceptedPointsPerSec: Math.round((expected / load.windowMs) * 1000),
    storedPointsPerSec,
    lost: expected - drain.rows,
    db,
    io,
    jobs: { jobs: jobsAfter.jobs - jobsBefore.jobs, points: jobsAfter.points - jobsBefore.points },
    webCpuUsPerRequest,
    perPoint,
  }
  describeRejections(label, load, problems)
  if (result.lost > 0)
    problems.push(
      `${label}: ${result.lost.toLocaleString('en-US')} accepted points never reached the points table (${drain.rows} of ${expected}; drain waited ${drain.waitedMs} ms)`,
    )
  if (result.lost < 0) {
    const unknown = load.unanswered * pointsPerRequest
    problems.push(
      `${label}: ${-result.lost} more rows stored than accepted answers${unknown ? ` (${unknown} points had no answer, which may explain up to that many)` : ''}`,
    )
  }
  if (drain.sum !== drain.rows) problems.push(`${label}: stored rows ${drain.rows} but sum(value) ${drain.sum} (every point was count=1)`)
  return result
}

/** Phase S: StatsD counters over UDP at STATSD_RATE a second; how many never reached the table, and why. */
async function statsdPhase(e: BenchEnv, target: Target, port: number, keys: string[], problems: string[]): Promise<StatsdPhase> {
  const health = async () =>
    Number(
      ((await (await fetch(`http://${target.host}:${target.port}/api/v1/health`)).json()) as { statsd?: { refused_today?: number } }).statsd
        ?.refused_today ?? 0,
    )
  const durationMs = SECONDS * 1000
  say(`phase S: StatsD counters over UDP, ${STATSD_RATE.toLocaleString('en-US')} a second for ${SECONDS} s`)
  const refusedBefore = await health()
  const dropsBefore = udpReceiveDrops()
  const send = await sendStatsd(port, keys, 'bench.statsd.', STATS, STATSD_RATE, durationMs)
  const drain = await waitForDrain(e.sql, 'bench.statsd.', send.sent, { stallMs: 5_000 })
  const dropsAfter = udpReceiveDrops()
  await sleep(1_100) // the intake adds its counts to Redis once a second
  const refused = (await health()) - refusedBefore
  const droppedPct = send.sent ? Math.round(((send.sent - drain.rows) / send.sent) * 100_000) / 1000 : 0
  if (refused > 0) problems.push(`phase S: the service refused ${refused} StatsD packets`)
  if (send.errors) problems.push(`phase S: ${send.errors} datagrams could not be sent`)
  return {
    ratePerSec: Math.round((send.sent / durationMs) * 1000),
    durationMs,
    sent: send.sent,
    sendErrors: send.errors,
    stored: drain.rows,
    droppedPct,
    refused,
    kernelDrops: dropsBefore === undefined || dropsAfter === undefined ? undefined : dropsAfter - dropsBefore,
    drainSeconds: Math.round((drain.lastStoredAt - send.endedAt) / 100) / 10,
  }
}

/**
 * Creates, for every load account, the series phases T and O write (and their warm-ups'), so that no phase
 * pays a series' first write: phase T's untagged stats and tagged series (phaseSeries), and phase O's series as
 * the service itself reads them from the exporter's body (decodeOtlp, convertOtlp), under the OTLP metric
 * names and under the v1 phases' names. Returns phase O's bodies and points.
 */
async function createPairSeries(e: BenchEnv, accounts: BenchAccount[]) {
  const body = await otlpExportBody('bench.otlp.', OTLP_METRICS, OTLP_SERIES)
  const warmBody = await otlpExportBody('bench.wotlp.', OTLP_METRICS, OTLP_SERIES)
  // Gauges hold no cumulative state: convertOtlp asks Redis for nothing.
  const converted = await convertOtlp(decodeOtlp(body, 'protobuf'), accounts[0].id, undefined as never, 'unused')
  if (converted.refused.length || converted.points.length !== OTLP_METRICS * OTLP_SERIES)
    throw new Error(`the exporter's body converts to ${converted.points.length} points (${converted.refused.length} refused)`)
  const otlpPoints = converted.points
  const v1PointsOf = (prefix: string) =>
    otlpPoints.map((p) => ({ stat: p.name.replace('bench.otlp.', prefix), value: p.value, t: p.t, tags: p.tags }))
  const wanted: Array<{ name: string; kind: Kind; tags?: Record<string, string> }> = []
  const add = (prefix: string, tagged: boolean) =>
    wanted.push(...phaseSeries(prefix, STATS, tagged).map((x) => ({ name: x.stat, kind: 'counter' as const, tags: x.tags })))
  for (const prefix of ['bench.tu.', 'bench.tv.', 'bench.ub.', 'bench.uc.', 'bench.wu.']) add(prefix, false)
  for (const prefix of ['bench.tt.', 'bench.tb.', 'bench.wt.']) add(prefix, true)
  for (const prefix of ['bench.otlp.', 'bench.wotlp.', 'bench.ov.', 'bench.ow.', 'bench.wov.'])
    wanted.push(...otlpPoints.map((p) => ({ name: p.name.replace('bench.otlp.', prefix), kind: 'gauge' as const, tags: p.tags })))
  for (const a of accounts) {
    const made = await createStats(e.sql, a.id, wanted, 1_000_000)
    if (!(made instanceof Map)) throw new Error(`createStats refused: ${JSON.stringify(made)}`)
  }
  return { otlp: { body, warmBody, points: otlpPoints.length, v1Points: v1PointsOf } }
}

async function main(): Promise<Results> {
  const results: Results = {
    startedAt: new Date().toISOString(),
    machine: { ...machineInfo(), cpuByStage: {} },
    config: {
      benchSeconds: SECONDS,
      connections: CONNECTIONS,
      loadAccounts: ACCOUNTS,
      webProcesses: WEB,
      workerProcesses: 1,
      statsPerPhase: STATS,
      batchSize: BATCH,
      v1BatchSize: V1_BATCH,
      lineProtocolLines: LP_LINES,
      statsdRate: STATSD_RATE,
      copyConnections: 2,
      serviceFrom: FROM_SOURCE ? 'sources (tsx)' : 'dist/ (npm run build)',
    },
    rateLimit: {
      perAccountRequestsPerSec: PLANS.business.requestsPerSecond,
      burst: PLANS.business.burst,
      accounts: ACCOUNTS,
      capRequestsPerSec: ACCOUNTS * PLANS.business.requestsPerSecond,
    },
    ratios: {},
    problems: [],
    disturbances: [],
  }
  const problems = results.problems
  const runId = randomBytes(3).toString('hex')

  say('creating database metrics_bench, migrating, creating accounts')
  env = await createBenchDatabase().catch((err: Error) => {
    throw new Error(
      `could not prepare the bench database and Redis (are PostgreSQL at ${serverUrl()} and Redis at ${process.env.REDIS_URL || 'redis://127.0.0.1:6379'} running?): ${err.message}`,
    )
  })
  const e = env
  const load = await createAccounts(e.sql, ACCOUNTS, `load-${runId}`)
  const [probe] = await createAccounts(e.sql, 1, `probe-${runId}`)
  const keys = load.map((a) => a.key)
  // The measured phases' stats exist before they start, as a steady writer's do: a stat's first write (its
  // creation, a transaction of five round trips) is paid by the warm-up's own stats, not in the measured
  // window. Phase 3's stats are left to be created under load.
  const names = ['bench.single.', 'bench.batch.', 'bench.v1.', 'bench.front1.', 'bench.front2.'].flatMap((p) =>
    Array.from({ length: STATS }, (_, k) => `${p}${k}`),
  )
  await e.sql`insert into stats (account_id, name, kind)
    select a, n, 'counter' from unnest(${load.map((a) => a.id)}::uuid[]) as a, unnest(${names}::text[]) as n`
  // Phase L's gauges (named from each account's lines) and phase S's counters, likewise.
  const lpRows = load.flatMap((a, i) =>
    lineProtocolStatNames('bench.lp', i, STATS).map((name) => ({ account_id: a.id, name, kind: 'gauge' })),
  )
  const statsdRows = load.flatMap((a) =>
    Array.from({ length: STATS }, (_, k) => ({ account_id: a.id, name: `bench.statsd.${k}`, kind: 'counter' })),
  )
  await e.sql`insert into stats ${e.sql([...lpRows, ...statsdRows], 'account_id', 'name', 'kind')}`

  const skipped = { error: 'skipped (BENCH_PHASES)' }

  // Each reference runs right before the phase it is the bar for, so that both see the same machine.
  // Each reference runs before its phase and again after it: the ratio uses the mean of the two, so that a
  // machine that speeds up or slows down during the pair does not favour either side.
  const referenceA = async (after = false) => {
    const stage = after ? 'reference A (after)' : 'reference A'
    const store = (x: LoadResult | Failed) => (after ? (results.referenceAAfter = x) : (results.referenceA = x))
    if (!PHASES.has('A')) return void store(skipped)
    try {
      say(`${stage}: ${WEB} bare Koa process(es)`)
      // The service's extra node flags too (a profile, a heap setting): the bar runs as the service does.
      const koa = await startWeb('bench/koa-ref.ts', 'koa', () => ({ NODE_ENV: 'production' }), SERVICE_NODE_ARGS)
      try {
        const cpu = steadyCpu(koa.procs)
        const r = store(
          await measured(
            stage,
            () =>
              runLoadProcess(
                children,
                'load-koa',
                {
                  targets: koa.targets,
                  connections: CONNECTIONS,
                  warmup: { durationMs: WARMUP_MS, groups: singleGroups(keys, 'bench.warm.', STATS) },
                  measure: { durationMs: SECONDS * 1000, groups: singleGroups(keys, 'bench.single.', STATS) },
                },
                cpu.start,
              ),
            (r) => r,
          ),
        )
        if (!isFailed(r)) {
          r.cpuUsPerRequest = cpu.perRequest(r)
          describeRejections(stage, r, problems)
        }
      } finally {
        await children.stop(koa.procs)
      }
    } catch (err) {
      store({ error: (err as Error).message })
    }
  }

  const referenceB = async (after = false) => {
    const stage = after ? 'reference B (after)' : 'reference B'
    const store = (x: CopyResult | Failed) => (after ? (results.referenceBAfter = x) : (results.referenceB = x))
    if (!PHASES.has('B')) {
      store(skipped)
      if (!after) results.referenceBStreaming = skipped
      return
    }
    try {
      say(`${stage}: one ${BATCH}-row COPY per batch over 2 connections`)
      store(await measured(stage, () => runCopyReference(e.databaseUrl, SECONDS * 1000, { connections: 2, rowsPerCopy: BATCH })))
    } catch (err) {
      store({ error: (err as Error).message })
    }
    if (after) return
    try {
      say('reference B (context): one streaming COPY per connection over 2 connections')
      results.referenceBStreaming = await runCopyReference(e.databaseUrl, Math.ceil(SECONDS / 2) * 1000, { connections: 2, rowsPerCopy: 0 })
    } catch (err) {
      results.referenceBStreaming = { error: (err as Error).message }
    }
  }

  // The service starts first and idles while reference A runs.
  const svc: Child[] = []
  let targets: Target[] = []
  let statsdPort: number | undefined
  try {
    if (!FROM_SOURCE) {
      say('service: compiling it as production runs it (npm run build)')
      buildDist()
    }
    say(`service: ${WEB} web process(es) + 1 worker${FROM_SOURCE ? ', from the TypeScript sources (BENCH_FROM_SOURCE=1)' : ', from dist/'}`)
    svc.push(
      children.start('worker', FROM_SOURCE ? 'workers/main.ts' : 'dist/workers/main.js', serviceEnv(e), undefined, SERVICE_NODE_ARGS),
    )
    // StatsD on the first web process only: one process holds a UDP port.
    statsdPort = PHASES.has('S') ? await freePort() : undefined
    let first = true
    const web = await startWeb(
      FROM_SOURCE ? 'api/server.ts' : 'dist/api/server.js',
      'web',
      () => {
        const extra: Record<string, string> = first && statsdPort !== undefined ? { STATSD_PORT: String(statsdPort) } : {}
        first = false
        // IO_COUNTS: the web processes count their PostgreSQL round trips and Redis commands (ioCounts below).
        return { ...serviceEnv(e), IO_COUNTS: '1', ...extra }
      },
      SERVICE_NODE_ARGS,
    )
    svc.push(...web.procs)
    webProcs = web.procs
    workerProc = svc[0]
    targets = web.targets
    await sleep(500)
    if (svc[0].exited) throw new Error(`the worker exited (code ${svc[0].exited.code}):\n${svc[0].tail()}`)
    const check = await checkWriteRoutes(targets[0], probe, runId)
    if (check.write) throw new Error(check.write)
    results.service = { ready: true, ...(check.read ? { error: check.read } : {}) }
  } catch (err) {
    results.service = { ready: false, error: (err as Error).message }
  }
  const service = results.service
  const notReady = { error: `service not ready: ${service.error}` }

  await referenceA()
  if (PHASES.has('I')) {
    const started = await InfluxRef.start(children, say)
    if (started instanceof InfluxRef) influx = started
    else {
      say(`InfluxDB reference: SKIPPED (${started.skipped})`)
      results.influxSingle = results.influxBatch = { error: `skipped: ${started.skipped}` }
    }
  } else results.influxSingle = results.influxBatch = skipped
  const influxPhase = async (stage: string, pointsPerRequest: number) => {
    if (!influx) return undefined
    say(`${stage}: InfluxDB 1.x line protocol, ${pointsPerRequest} point(s) per request, ${CONNECTIONS} connections for ${SECONDS} s`)
    try {
      return await measured(
        stage,
        () =>
          influx!.run(stage.replace(/\s+/g, '-'), {
            connections: CONNECTIONS,
            durationMs: SECONDS * 1000,
            warmupMs: WARMUP_MS,
            pointsPerRequest,
            accounts: ACCOUNTS,
          }),
        (r) => r.load,
      )
    } catch (err) {
      return { error: (err as Error).message }
    }
  }
  // A service phase, when the service is up and the phase was asked for; a failure is recorded, not thrown.
  const runPhase = async (
    key: string,
    label: string,
    statPrefix: string,
    kind: PhaseKind | CustomLoad,
    paused?: Child,
  ): Promise<PhaseResult | Failed> => {
    if (!service.ready) return notReady
    if (!PHASES.has(key)) return skipped
    try {
      return await measured(
        label,
        () => servicePhase(label, e, targets, keys, statPrefix, kind, problems, paused),
        (r) => r.load,
      )
    } catch (err) {
      return { error: (err as Error).message }
    }
  }
  results.influxSingle = (await influxPhase('influx single', 1)) ?? results.influxSingle
  results.phase1 = await runPhase('1', 'phase 1', 'bench.single.', 'single')
  results.phaseF1 = await runPhase('F', 'phase F1', 'bench.front1.', 'single', svc[0])
  await referenceA(true)

  await referenceB()
  results.influxBatch = (await influxPhase('influx batch', BATCH)) ?? results.influxBatch
  if (PHASES.has('L')) results.influxLines = (await influxPhase('influx lines', LP_LINES)) ?? results.influxSingle
  else results.influxLines = skipped
  await influx?.stop()
  influx = undefined
  results.phase2 = await runPhase('2', 'phase 2', 'bench.batch.', 'batch')
  results.phaseF2 = await runPhase('F', 'phase F2', 'bench.front2.', 'batch', svc[0])
  results.phaseV = await runPhase('V', 'phase V', 'bench.v1.', 'v1batch')
  results.phaseL = await runPhase('L', 'phase L', 'bench.lp.', 'lines')
  await referenceB(true)

  if (!service.ready) results.phaseS = notReady
  else if (!PHASES.has('S') || statsdPort === undefined) results.phaseS = skipped
  else {
    try {
      results.phaseS = await measured('phase S', () => statsdPhase(e, targets[0], statsdPort!, keys, problems))
    } catch (err) {
      results.phaseS = { error: (err as Error).message }
    }
  }

  results.pairs = {}
  // A pair: `reference` before and after, `subject` between, all on series created beforehand (createPairSeries).
  const pair = async (
    key: string,
    id: string,
    label: string,
    names: { reference: string; subject: string },
    loads: { before: CustomLoad; subject: CustomLoad; after: CustomLoad },
    prefixes: { before: string; subject: string; after: string },
    target: number,
  ) => {
    if (!PHASES.has(key)) return
    const before = await runPhase(key, `${id} ${names.reference}`, prefixes.before, loads.before)
    const measured = await runPhase(key, `${id} ${names.subject}`, prefixes.subject, loads.subject)
    const after = await runPhase(key, `${id} ${names.reference} (after)`, prefixes.after, loads.after)
    const p: PairResult = { label, reference: names.reference, subject: names.subject, before, measured, after, target }
    const m = isFailed(measured) ? undefined : measured.perPoint
    const refs = [before, after].flatMap((x) => (isFailed(x) || !x.perPoint ? [] : [x.perPoint]))
    if (m && refs.length) {
      const mean = (f: (x: PerPointCpu) => number) => refs.reduce((a, x) => a + f(x), 0) / refs.length
      const q = (f: (x: PerPointCpu) => number) => Math.round((f(m) / mean(f)) * 100) / 100
      p.ratio = { web: q((x) => x.web), worker: q((x) => x.worker), postgres: q((x) => x.postgres), total: q((x) => x.total) }
    }
    results.pairs![id] = p
  }
  if (service.ready && (PHASES.has('T') || PHASES.has('O'))) {
    const made = await createPairSeries(e, load).catch((err: Error) => err)
    if (made instanceof Error) problems.push(`phases T and O: could not create their series: ${made.message}`)
    else {
      const single = (prefix: string, warm: string, tagged: boolean): CustomLoad => ({
        groups: v1SingleGroups(keys, prefix, STATS, tagged),
        warm: v1SingleGroups(keys, warm, STATS, tagged),
        pointsPerRequest: 1,
      })
      const batch = (prefix: string, warm: string, tagged: boolean): CustomLoad => ({
        groups: v1SeriesBatchGroups(keys, prefix, STATS, tagged, TAGGED_BATCH),
        warm: v1SeriesBatchGroups(keys, warm, STATS, tagged, TAGGED_BATCH),
        pointsPerRequest: TAGGED_BATCH,
      })
      const tagged = { reference: 'untagged', subject: 'tagged (3 tags)' }
      await pair(
        'T',
        'phase T1',
        'single v1 writes, tagged vs untagged',
        tagged,
        {
          before: single('bench.tu.', 'bench.wu.', false),
          subject: single('bench.tt.', 'bench.wt.', true),
          after: single('bench.tv.', 'bench.wu.', false),
        },
        { before: 'bench.tu.', subject: 'bench.tt.', after: 'bench.tv.' },
        TARGETS.taggedVsUntagged,
      )
      await pair(
        'T',
        'phase TB',
        `v1 batches of ${TAGGED_BATCH}, tagged vs untagged`,
        tagged,
        {
          before: batch('bench.ub.', 'bench.wu.', false),
          subject: batch('bench.tb.', 'bench.wt.', true),
          after: batch('bench.uc.', 'bench.wu.', false),
        },
        { before: 'bench.ub.', subject: 'bench.tb.', after: 'bench.uc.' },
        TARGETS.taggedVsUntagged,
      )
      const o = made.otlp
      const v1Load = (prefix: string): CustomLoad => ({
        groups: keys.map((k) => [v1Points(k, o.v1Points(prefix))]),
        warm: keys.map((k) => [v1Points(k, o.v1Points('bench.wov.'))]),
        pointsPerRequest: o.points,
      })
      await pair(
        'O',
        'phase O',
        `OTLP protobuf vs /api/v1/points, ${o.points} points a request`,
        { reference: '/api/v1/points', subject: 'OTLP protobuf' },
        {
          before: v1Load('bench.ov.'),
          subject: { groups: otlpGroups(keys, o.body), warm: otlpGroups(keys, o.warmBody), pointsPerRequest: o.points },
          after: v1Load('bench.ow.'),
        },
        { before: 'bench.ov.', subject: 'bench.otlp.', after: 'bench.ow.' },
        TARGETS.otlpVsV1,
      )
    }
  }

  if (!service.ready) results.phase3 = notReady
  else if (!PHASES.has('3')) results.phase3 = skipped
  else if (service.error) results.phase3 = { error: `not run: ${service.error}` }
  else {
    try {
      const durationMs = Math.max(SECONDS, 8) * 1000
      say(`phase 3: probes under single-point load (${CONNECTIONS} connections, ${durationMs / 1000} s)`)
      const [l3, p3] = await measured(
        'phase 3',
        async () => {
          const startedAt = Date.now()
          const loadRun = runLoadProcess(children, 'load-phase-3', {
            targets,
            connections: CONNECTIONS,
            measure: { durationMs, groups: singleGroups(keys, 'bench.load3.', STATS) },
          })
          loadRun.catch(() => {}) // awaited below; this only keeps an early failure from being "unhandled"
          await sleep(1500) // let the load reach its pace
          const probeRun = runProbes({
            targets,
            key: probe.key,
            runId,
            count: 50,
            intervalMs: 100,
            pollMs: 20,
            timeoutMs: 10_000,
            launchUntil: startedAt + durationMs - 1000,
          })
          return Promise.all([loadRun, probeRun])
        },
        ([l]) => l,
      )
      results.phase3 = { load: l3, probe: p3 }
      describeRejections('phase 3 load', l3, problems)
      if (p3.writeFailed) problems.push(`phase 3: ${p3.writeFailed} probe writes not accepted`)
      if (p3.neverVisible) problems.push(`phase 3: ${p3.neverVisible} accepted probe points never visible within 10 s`)
      for (const f of p3.failures.slice(0, 5)) problems.push(`phase 3: ${f}`)
    } catch (err) {
      results.phase3 = { error: (err as Error).message }
    }
  }

  for (const c of svc) {
    if (c.exited) problems.push(`${c.name} exited during the run (code ${c.exited.code}, signal ${c.exited.signal})`)
    if (c.warnings)
      problems.push(
        `${c.name} wrote ${c.warnings} warning/error log line(s), e.g. ${c.lines
          .slice(0, 2)
          .map((l) => l.slice(0, 300))
          .join(' | ')}`,
      )
  }
  service.warnings = svc.reduce((s, c) => s + c.warnings, 0)
  service.logTail = svc.flatMap((c) => c.lines.slice(-5).map((l) => `${c.name}| ${l.slice(0, 400)}`))

  results.machine.cpuByStage = cpuByStage
  results.machine.quietBeforeStage = quietness
  for (const [stage, u] of Object.entries(cpuByStage)) {
    if (u.othersPct >= 10)
      results.disturbances.push(
        `${stage}: other processes used ${u.othersPct}% of the machine meanwhile (${u.top.map((t) => `${t.comm}[${t.pid}]`).join(', ')}); this stage's figures are depressed`,
      )
  }

  // The load generator does the same work for every single-point request, whoever answers. At phase 1's lower
  // rate it batches less per wake-up and spends about 1.3x its CPU per request in the InfluxDB stage; far more
  // than that says the machine itself ran slower meanwhile (a neighbour on the host takes cycles no process
  // here is charged for, and every process's CPU per point rises alike), so the phase's ratios are depressed.
  const loadUs = (l: LoadResult | undefined) =>
    l && l.completed + l.warmupCompleted > 0 ? (l.cpuMs * 1000) / (l.completed + l.warmupCompleted) : undefined
  const slowGen = loadUs(isFailed(results.phase1) ? undefined : results.phase1?.load)
  const baseGen = loadUs(isFailed(results.influxSingle) ? undefined : results.influxSingle?.load)
  if (slowGen !== undefined && baseGen !== undefined && slowGen > 1.5 * baseGen) {
    results.disturbances.push(
      `phase 1: the load generator spent ${Math.round(slowGen)} µs of CPU per request against ${Math.round(baseGen)} in the InfluxDB stage (the same kind of request; its lower rate alone costs it about 1.3x in undisturbed runs): the machine most likely ran slower during phase 1, and its ratio to InfluxDB is depressed`,
    )
  }

  // Ratios.
  const koaPerSec = meanOf(results.referenceA, results.referenceAAfter, (x) => x.requestsPerSec)
  const copyPerSec = meanOf(results.referenceB, results.referenceBAfter, (x) => x.rowsPerSec)
  const p1 = isFailed(results.phase1) ? undefined : results.phase1
  const p2 = isFailed(results.phase2) ? undefined : results.phase2
  const r2 = (x: number) => Math.round(x * 100) / 100
  if (koaPerSec && p1) {
    results.ratios.singleAcceptedVsKoa = r2(p1.load.acceptedPerSec / koaPerSec)
    results.ratios.singleStoredVsKoa = r2(p1.storedPointsPerSec / koaPerSec)
  }
  const i1 = isFailed(results.influxSingle) ? undefined : results.influxSingle
  const i2 = isFailed(results.influxBatch) ? undefined : results.influxBatch
  if (i1 && p1) results.ratios.singleStoredVsInflux = r2(p1.storedPointsPerSec / i1.storedPointsPerSec)
  if (i2 && p2) results.ratios.batchStoredVsInflux = r2(p2.storedPointsPerSec / i2.storedPointsPerSec)
  const f1 = isFailed(results.phaseF1) ? undefined : results.phaseF1
  const f2 = isFailed(results.phaseF2) ? undefined : results.phaseF2
  if (i1 && f1) results.ratios.frontSingleAcceptedVsInflux = r2(f1.acceptedPointsPerSec / i1.storedPointsPerSec)
  if (koaPerSec && f1) results.ratios.frontSingleAcceptedVsKoa = r2(f1.acceptedPointsPerSec / koaPerSec)
  if (i2 && f2) results.ratios.frontBatchAcceptedVsInflux = r2(f2.acceptedPointsPerSec / i2.storedPointsPerSec)
  if (copyPerSec && p2) {
    results.ratios.batchAcceptedVsCopy = r2(p2.acceptedPointsPerSec / copyPerSec)
    results.ratios.batchStoredVsCopy = r2(p2.storedPointsPerSec / copyPerSec)
  }
  const il = isFailed(results.influxLines) ? undefined : results.influxLines
  const pl = isFailed(results.phaseL) ? undefined : results.phaseL
  if (il && pl) results.ratios.linesStoredVsInflux = r2(pl.storedPointsPerSec / il.storedPointsPerSec)
  const pv = isFailed(results.phaseV) ? undefined : results.phaseV
  if (copyPerSec && pv) {
    results.ratios.v1BatchAcceptedVsCopy = r2(pv.acceptedPointsPerSec / copyPerSec)
    results.ratios.v1BatchStoredVsCopy = r2(pv.storedPointsPerSec / copyPerSec)
  }

  // Did the per-account rate limit shape the figures?
  const rl = results.rateLimit
  const got429 = [results.phase1, results.phase2, results.phase3].some((p) => !isFailed(p) && p && (p.load.httpStatus['429'] ?? 0) > 0)
  const notes: string[] = []
  if (p1 && p1.load.requestsPerSec > 0.8 * rl.capRequestsPerSec)
    notes.push(
      `phase 1 ran at ${Math.round((p1.load.requestsPerSec / rl.capRequestsPerSec) * 100)}% of the cap: the rate limit may be what capped it; raise BENCH_ACCOUNTS.`,
    )
  if (got429) notes.push('Some requests were answered 429: the rate limit capped the load.')
  if (!notes.length) notes.push('The load stayed below the cap (no 429).')
  rl.note = notes.join(' ')
  return results
}

let exitCode = 0
let results: Results | undefined
try {
  results = await main()
} catch (err) {
  exitCode = 1
  say(`bench failed: ${(err as Error).stack ?? err}`)
} finally {
  await cleanup()
}
if (results) {
  results.finishedAt = new Date().toISOString()
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`)
  process.stdout.write(`${renderReport(results)}\n\nResults written to bench/last-results.json\n`)
  const serviceFailed = [
    results.phase1,
    results.phaseF1,
    results.phase2,
    results.phaseF2,
    results.phaseV,
    results.phaseL,
    results.phaseS,
    results.phase3,
  ].some((p) => isFailed(p) && !p.error.startsWith('skipped'))
  if (serviceFailed) {
    process.stdout.write('\nThe service phases did not all run: see the FAILED lines above.\n')
    exitCode = 1
  }
}
process.exit(exitCode)
