// PromQL agreement with Prometheus itself, and VictoriaMetrics beside it (docs/decisions.md §25). Not a test:
// it prints a table.
//
//   1. The same samples go to the service (through the persist path, applyBatch, as counters' increments and
//      gauges' values), to Debian's Prometheus and to Debian's VictoriaMetrics (remote write to each, on its own
//      port and data directory under /tmp, loopback only): gauges g0..g9 (random walks), a gauge r0 holding a
//      cumulative count with resets, and counters c0..c4 (Prometheus and VictoriaMetrics get their running
//      totals). Two hours, a sample every 15 s, 7 s past the grid, so no sample sits on a window's edge
//      (Prometheus 2.42's windows are closed, ours left-open).
//   2. A corpus of queries (every supported function and operator, counters and gauges), each asked as an
//      instant query at three times and as range queries at three steps, of all three; the service's answers and
//      VictoriaMetrics' compared with Prometheus' series by series within 1e-9 relative. Agreement is reported
//      per query (VictoriaMetrics' MetricsQL differs from PromQL on purpose in places, rate's extrapolation
//      among them: its figure is reported, not a target).
//   3. query_range latency of the corpus on all three, and over 7 and 30 days for 1 and 100 series: 100 counters
//      (one counter `l`, tagged i=0..99) and a gauge over BENCH_PROMQL_DAYS (30) days and one more, a sample every
//      BENCH_PROMQL_LONG_STEP (120) s (BENCH_PROMQL_DAYS=0: none, the corpus alone), written before the rest
//      (Prometheus takes remote-written samples in time order), ending at a UTC midnight at least 3 hours back;
//      start and end on multiples of the step, as Grafana aligns them; BENCH_PROMQL_ROUNDS
//      (10) rounds interleaved. The service's time is its engine in process over PostgreSQL plus encoding and
//      decoding the JSON answer; Prometheus' and VictoriaMetrics' are over HTTP on loopback, decoding
//      included. These long answers (which the service reads from rollups) are compared with Prometheus' too,
//      within the bound README states for rollups. The closed days' five-minute and hourly rollups are packed into
//      their day blobs (sql/0050) before any is measured: the refresh packs a batch a pass, and the bench the rest.
//
// Own database (metrics_bench_promql, dropped at the end) and Redis prefix. Env: PROMETHEUS_BIN (prometheus),
// VICTORIA_BIN (victoria-metrics).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { applyBatch } from '../shared/points/repo.js'
import { refreshRollups } from '../workers/refresh-rollups.js'
import { buildRollupDays } from '../shared/points/rollups.js'
import type { QueuedPoint } from '../shared/jobs.js'
import { instantQuery, type QueryData, rangeQuery, upperBound } from '../shared/promql/engine.js'
import { statsSource } from '../shared/promql/source.js'
import { seriesKey } from '../shared/ingest/tags.js'
import { createStats } from '../shared/stats/repo.js'
import { beginBench, isMain, runStandalone, type BenchResultsBase } from './common.js'
import { createAccount } from './setup.js'
import { percentile, round } from './stats.js'
import { cpuDuring } from './machine.js'
import { closedPortNumber } from './promql-port.js'
import { remoteWriteBody, type RemoteWriteSeries } from '../test/helpers/remote-write.js'

const MIN = 60
const STEP_SAMPLES = 15

interface Agreement {
  query: string
  asked: number
  agreed: number
  firstDifference?: string
  /** VictoriaMetrics' answers against Prometheus'. */
  vmAgreed?: number
  vmFirstDifference?: string
}

interface LongRow {
  days: number
  series: number
  query: string
  step: number
  service: Pcts
  prometheus: Pcts
  victoria: Pcts
  /** The service's answer against Prometheus': the largest difference, and whether it is within README's bound. */
  vsPrometheus: string
  withinBound: boolean
}

interface PromqlBenchResults extends BenchResultsBase<Record<string, never>> {
  samples?: number
  agreement?: Agreement[]
  rangeMs?: { service: Pcts; prometheus: Pcts; victoria: Pcts }
  longMs?: LongRow[]
}

type Pcts = { p50: number; p99: number }
const pctOf = (xs: number[]): Pcts => {
  const s = [...xs].sort((p, q) => p - q)
  return { p50: round(percentile(s, 0.5), 1), p99: round(percentile(s, 0.99), 1) }
}

const LONG_DAYS = Number(process.env.BENCH_PROMQL_DAYS ?? 30)
const LONG_STEP = Number(process.env.BENCH_PROMQL_LONG_STEP ?? 120)
const LONG_ROUNDS = Number(process.env.BENCH_PROMQL_ROUNDS ?? 10)
/** The long counters' largest increment: one sample interval's increase at most, README's bound for rollups. */
const LONG_MAX_INC = 7

/** One remote-write request to each of the URLs (Prometheus and VictoriaMetrics alike). */
async function remoteWrite(urls: string[], timeseries: RemoteWriteSeries[]): Promise<void> {
  const body = remoteWriteBody(timeseries)
  await Promise.all(
    urls.map(async (url) => {
      const res = await fetch(`${url}/api/v1/write`, {
        method: 'POST',
        body,
        headers: { 'content-encoding': 'snappy', 'content-type': 'application/x-protobuf', 'x-prometheus-remote-write-version': '0.1.0' },
      })
      if (res.status !== 204) throw new Error(`remote write to ${url}: ${res.status} ${await res.text()}`)
    }),
  )
}

/** A reference server started by the bench, ready on a loopback port, and its stop. */
async function startPeer(name: string, bin: string, args: (port: number, dir: string) => string[], readyPath: string) {
  const dir = mkdtempSync(join(tmpdir(), `promql-bench-${name}-`))
  const port = await closedPortNumber()
  const child = spawn(bin, args(port, dir), { stdio: 'ignore' })
  let failed: Error | undefined
  child.once('error', (e) => void (failed = e))
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise((r) => child.once('close', r))
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    if (child.pid !== undefined) await exited
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (let i = 0; ; i++) {
      const ok = await fetch(`${url}${readyPath}`).then(
        (r) => r.ok,
        () => false,
      )
      if (ok) break
      if (i > 150 || failed || child.exitCode !== null)
        throw new Error(`${name} did not become ready${failed ? `: ${failed.message}` : ''}`)
      await new Promise((r) => setTimeout(r, 200))
    }
  } catch (e) {
    await stop()
    throw e
  }
  return { url, pid: child.pid!, stop }
}

/** Random walks and counters, the same for both sides. */
function makeData(base: number, n: number) {
  let seed = 42
  const rnd = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed / 2 ** 31
  }
  const series: Array<{ name: string; kind: 'counter' | 'gauge'; ts: number[]; increments: number[]; promValues: number[] }> = []
  for (let g = 0; g < 10; g++) {
    let v = 50 + g * 10
    const s = { name: `g${g}`, kind: 'gauge' as const, ts: [] as number[], increments: [] as number[], promValues: [] as number[] }
    for (let i = 0; i < n; i++) {
      v = Math.round((v + (rnd() - 0.5) * 10) * 100) / 100
      s.ts.push(base + STEP_SAMPLES * i + 7)
      s.increments.push(v)
      s.promValues.push(v)
    }
    series.push(s)
  }
  for (let c = 0; c < 5; c++) {
    let total = 0
    const s = { name: `c${c}`, kind: 'counter' as const, ts: [] as number[], increments: [] as number[], promValues: [] as number[] }
    for (let i = 0; i < n; i++) {
      const inc = Math.floor(rnd() * 20 * (c + 1))
      total += inc
      s.ts.push(base + STEP_SAMPLES * i + 7)
      s.increments.push(inc)
      s.promValues.push(total)
    }
    series.push(s)
  }
  // A cumulative count with resets, as a gauge on both sides: rate() must add the resets back.
  let r = 0
  const reset = { name: 'r0', kind: 'gauge' as const, ts: [] as number[], increments: [] as number[], promValues: [] as number[] }
  for (let i = 0; i < n; i++) {
    r = i % 97 === 50 ? Math.floor(rnd() * 5) : r + Math.floor(rnd() * 10)
    reset.ts.push(base + STEP_SAMPLES * i + 7)
    reset.increments.push(r)
    reset.promValues.push(r)
  }
  series.push(reset)
  return series
}

function corpus(): string[] {
  const q: string[] = []
  for (const fn of ['rate', 'irate', 'increase', 'delta']) {
    q.push(`${fn}(c0[5m])`, `${fn}(r0[2m])`)
  }
  q.push('rate(c1[1m])', 'increase(c2[10m])', 'delta(g0[5m])', 'sum(rate({__name__=~"c.*"}[5m]))')
  for (const fn of ['sum', 'avg', 'min', 'max', 'count', 'last']) q.push(`${fn}_over_time(g1[5m])`, `${fn}_over_time(c3[3m])`)
  q.push('quantile_over_time(0.9, g2[10m])', 'quantile_over_time(0.5, g3[5m])', 'quantile_over_time(0, g4[5m])')
  for (const fn of ['abs', 'ceil', 'floor', 'round']) q.push(`${fn}(g5 - 60)`)
  q.push('round(g6, 5)', 'clamp_min(g7, 80)', 'clamp_max(g7, 80)', 'g0 offset 10m', 'rate(c0[5m] offset 15m)')
  for (const agg of ['sum', 'avg', 'min', 'max', 'count']) q.push(`${agg}({__name__=~"g.*"})`)
  q.push('quantile(0.75, {__name__=~"g.*"})', 'topk(3, {__name__=~"g.*"})', 'bottomk(2, {__name__=~"g.*"})')
  q.push(
    'sum without (__name__) ({__name__=~"g[0-3]"})',
    'count by (__name__) ({__name__=~"g.*"})',
    'max by (__name__) (rate({__name__=~"c.*"}[5m]))',
  )
  q.push(
    'g0 + g1',
    'g0 - on() g1',
    'g0 * ignoring(__name__) g2',
    'g3 / g4',
    'g5 % 7',
    '2 ^ g8 / 1e30',
    'g1 > 50',
    'g1 > bool 50',
    '60 < g2',
  )
  q.push(
    'g3 == bool g3',
    'g4 != g5',
    'g6 >= 40',
    'g7 <= bool 70',
    '-g0',
    '1 + 2 * 3',
    'time()',
    'vector(1)',
    'scalar(g0)',
    'vector(time()) - 1000',
  )
  q.push(
    '{__name__="g9"}',
    '{__name__!="g9", __name__=~"g.*"}',
    '{__name__=~"c[0-2]"}',
    '{__name__!~"g.*|c.*"}',
    '{__name__=~"r.*|x"}',
    'rate(c0[5m]) * 60',
  )
  return q
}

const tol = (a: string, b: string) => {
  if (a === b) return true
  const x = Number(a)
  const y = Number(b)
  return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y))
}

/** Differences between two answers, as a line, or null when they agree. */
function compare(a: QueryData, b: QueryData): string | null {
  if (a.resultType !== b.resultType) return `types ${a.resultType} vs ${b.resultType}`
  if (a.resultType === 'scalar' || a.resultType === 'string') {
    const y = b.result as [number, string]
    return a.result[0] === y[0] && tol(a.result[1], y[1]) ? null : `${JSON.stringify(a.result)} vs ${JSON.stringify(y)}`
  }
  const key = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort())
  const flat = (d: QueryData) =>
    new Map(
      (d.result as Array<{ metric: Record<string, string>; value?: [number, string]; values?: Array<[number, string]> }>).map((r) => [
        key(r.metric),
        r.value ? [r.value] : r.values!,
      ]),
    )
  const x = flat(a)
  const y = flat(b)
  if (x.size !== y.size) return `${x.size} series vs ${y.size}: ${[...x.keys()].slice(0, 3)} / ${[...y.keys()].slice(0, 3)}`
  for (const [k, xs] of x) {
    const ys = y.get(k)
    if (!ys) return `series ${k} missing from Prometheus`
    if (xs.length !== ys.length) return `${k}: ${xs.length} samples vs ${ys.length}`
    for (let i = 0; i < xs.length; i++)
      if (xs[i][0] !== ys[i][0] || !tol(xs[i][1], ys[i][1])) return `${k} at ${xs[i][0]}: ${xs[i][1]} vs ${ys[i][1]} (${ys[i][0]})`
  }
  return null
}

/**
 * The service's long-range answer against Prometheus': the same series and step times, the largest difference of
 * a value, and whether every value is within README's bound for rollups (`within`: the service's value, Prometheus'
 * and the step time in seconds).
 */
function compareLong(
  a: QueryData,
  b: QueryData,
  within: (mine: number, theirs: number, t: number) => boolean,
): { line: string; within: boolean } {
  if (a.resultType !== 'matrix' || b.resultType !== 'matrix') return { line: `types ${a.resultType} vs ${b.resultType}`, within: false }
  const key = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort())
  const y = new Map(b.result.map((r) => [key(r.metric), r.values]))
  if (a.result.length !== y.size) return { line: `${a.result.length} series vs ${y.size}`, within: false }
  let maxAbs = 0
  let maxRel = 0
  let n = 0
  let outside = 0
  for (const r of a.result) {
    const ys = y.get(key(r.metric))
    if (!ys) return { line: `series ${key(r.metric)} missing from Prometheus`, within: false }
    if (ys.length !== r.values.length) return { line: `${key(r.metric)}: ${r.values.length} samples vs ${ys.length}`, within: false }
    for (let i = 0; i < ys.length; i++) {
      if (r.values[i][0] !== ys[i][0]) return { line: `${key(r.metric)}: a sample at ${r.values[i][0]} vs ${ys[i][0]}`, within: false }
      const [p, q] = [Number(r.values[i][1]), Number(ys[i][1])]
      maxAbs = Math.max(maxAbs, Math.abs(p - q))
      maxRel = Math.max(maxRel, Math.abs(p - q) / Math.max(1e-300, Math.abs(q)))
      if (!within(p, q, r.values[i][0])) outside++
      n++
    }
  }
  return {
    line: `${n} values, largest difference ${maxAbs.toPrecision(3)} (${(maxRel * 100).toPrecision(3)}%)${outside ? `, ${outside} beyond the bound` : ''}`,
    within: outside === 0,
  }
}

export async function runPromqlBench(options: { log?: (l: string) => void } = {}): Promise<PromqlBenchResults> {
  const { say, results, bench } = beginBench<Record<string, never>, PromqlBenchResults>({
    tag: 'promql-bench',
    dbName: 'metrics_bench_promql',
    prefixLabel: 'benchpq',
    fromEnv: {},
    options,
  })
  const peers: Array<{ stop: () => Promise<void> }> = []
  try {
    const prom = await startPeer(
      'prometheus',
      process.env.PROMETHEUS_BIN ?? 'prometheus',
      (port, dir) => {
        writeFileSync(join(dir, 'prometheus.yml'), 'global: {}\n')
        return [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--web.enable-remote-write-receiver',
          // Its default (15 days) would drop the long range's older half before it is asked.
          '--storage.tsdb.retention.time=1y',
        ]
      },
      '/-/ready',
    )
    peers.push(prom)
    // VictoriaMetrics: a retention past the long range (its default, a month, would drop its oldest day), and its
    // response cache off, so that repeated rounds are computed as on the other two.
    const vm = await startPeer(
      'victoria-metrics',
      process.env.VICTORIA_BIN ?? 'victoria-metrics',
      (port, dir) => [
        `-storageDataPath=${join(dir, 'data')}`,
        `-httpListenAddr=127.0.0.1:${port}`,
        '-retentionPeriod=1y',
        '-search.disableCache',
        '-loggerLevel=ERROR',
      ],
      '/health',
    )
    peers.push(vm)
    const promUrl = prom.url
    const vmUrl = vm.url
    const peerUrls = [promUrl, vmUrl]
    const sql = await bench.createDatabase('metrics-bench-promql')
    const account = await createAccount(sql, 'promql')
    const now = Math.floor(Date.now() / 1000 / MIN) * MIN
    // Long ranges first (Prometheus takes remote-written samples in time order): 100 counters over LONG_DAYS and
    // one day more (so the first step's windows hold samples), a sample every LONG_STEP seconds, ending at a UTC
    // midnight at least 3 hours back (whole days, so every step below divides the range); the service folds them
    // into its rollups.
    const longEnd = Math.floor((now - 3 * 3600) / 86_400) * 86_400
    // BENCH_PROMQL_DAYS=0: no long ranges at all, the corpus' agreement alone.
    const longStart = longEnd - (LONG_DAYS > 0 ? LONG_DAYS + 1 : 0) * 86_400
    // One counter `l` of 100 series, tagged i=0..99 (labels in PromQL), as a stat charted by tag is.
    const longStats = await createStats(
      sql,
      account.id,
      Array.from({ length: 100 }, (_, i) => ({ name: 'l', kind: 'counter' as const, tags: { i: String(i) } })),
      1000,
    )
    if (!(longStats instanceof Map)) throw new Error('could not create the long-range stats')
    const ids = Array.from({ length: 100 }, (_, i) => longStats.get(seriesKey('l', { i: String(i) }))!.stat.id)
    const totals = new Array<number>(100).fill(0)
    // And a gauge, wl, a random walk at the same times: over rollups a gauge is its buckets' means, so its answers
    // are checked against the raw values' range (kept here) rather than Prometheus' value.
    const lgStats = await createStats(sql, account.id, [{ name: 'wl', kind: 'gauge' }], 1000)
    if (!(lgStats instanceof Map)) throw new Error('could not create the long gauge')
    const lgId = lgStats.get('wl')!.stat.id
    const lgTs: number[] = []
    const lgVs: number[] = []
    let walk = 100
    let walkSeed = 7
    let longSamples = 0
    const seeded = performance.now()
    for (let t0 = longStart; t0 < longEnd; t0 += 6 * 3600) {
      const rows: QueuedPoint[] = []
      const timeseries = ids.map((id, k) => {
        const samples: Array<{ value: number; timestamp: number }> = []
        for (let t = t0; t < Math.min(t0 + 6 * 3600, longEnd); t += LONG_STEP) {
          const inc = 1 + ((t / LONG_STEP + k) % LONG_MAX_INC)
          totals[k] += inc
          rows.push([id, t + 7, inc, null])
          samples.push({ value: totals[k], timestamp: (t + 7) * 1000 })
        }
        return {
          labels: [
            { name: '__name__', value: 'l' },
            { name: 'i', value: String(k) },
          ],
          samples,
        }
      })
      const lgSamples: Array<{ value: number; timestamp: number }> = []
      for (let t = t0; t < Math.min(t0 + 6 * 3600, longEnd); t += LONG_STEP) {
        walkSeed = (walkSeed * 1_103_515_245 + 12_345) % 2 ** 31
        walk = Math.round((walk + (walkSeed / 2 ** 31 - 0.5) * 4) * 100) / 100
        rows.push([lgId, t + 7, walk, null])
        lgSamples.push({ value: walk, timestamp: (t + 7) * 1000 })
        lgTs.push(t + 7)
        lgVs.push(walk)
      }
      timeseries.push({ labels: [{ name: '__name__', value: 'wl' }], samples: lgSamples })
      longSamples += rows.length
      for (let i = 0; i < rows.length; i += 20_000) await applyBatch(sql, `long-${t0}-${i}`, rows.slice(i, i + 20_000))
      await remoteWrite(peerUrls, timeseries)
    }
    while ((await refreshRollups(sql)).rows > 0);
    // The day blobs of the closed days (sql/0050): each refresh pass packs a batch, as in a running service; the
    // rest here, so that every whole day is read packed, as it is once the refreshes have caught up.
    while ((await buildRollupDays(sql)) > 0);
    // As autovacuum leaves a steady service: the fold deleted 2 million rollup_pending rows, whose dead index
    // entries every read of the pending minutes would otherwise walk, and the planner needs the tables' statistics.
    await sql`vacuum analyze rollup_pending, rollups_1m, rollups_5m, rollups_1h, rollups_1d, rollup_days, rollup_days_pending, points, point_blocks, stats`
    // And the seeding's dirty pages written out now, so that a checkpoint of them cannot land among the timed rounds.
    await sql`checkpoint`.catch(() => {})
    say(`${longSamples} long-range samples in all three in ${round((performance.now() - seeded) / 1000, 1)} s`)
    const n = (2 * 3600) / STEP_SAMPLES
    const base = now - 2 * 3600 - 10 * MIN
    const data = makeData(base, n)
    const stats = await createStats(
      sql,
      account.id,
      data.map((s) => ({ name: s.name, kind: s.kind })),
      1000,
    )
    if (!(stats instanceof Map)) throw new Error('could not create the stats')
    const points: QueuedPoint[] = data.flatMap((s) =>
      s.ts.map((t, i): QueuedPoint => [stats.get(s.name)!.stat.id, t, s.increments[i], null]),
    )
    for (let i = 0; i < points.length; i += 5_000) await applyBatch(sql, `seed-${i}`, points.slice(i, i + 5_000))
    // Remote write in time order, a few minutes at a time, as Prometheus' own senders do.
    for (let i = 0; i < n; i += 20)
      await remoteWrite(
        peerUrls,
        data.map((s) => ({
          labels: [{ name: '__name__', value: s.name }],
          samples: s.ts.slice(i, i + 20).map((t, j) => ({ value: s.promValues[i + j], timestamp: t * 1000 })),
        })),
      )
    // VictoriaMetrics makes samples searchable after its in-memory buffers are flushed.
    await fetch(`${vmUrl}/internal/force_flush`)
    results.samples = points.length
    say(`${points.length} samples in all three`)

    const source = statsSource((fn) => fn(sql))
    const askOf =
      (url: string, who: string) =>
      async (path: string, params: Record<string, string>): Promise<QueryData> => {
        const res = await fetch(`${url}/api/v1/${path}?${new URLSearchParams(params)}`)
        const body = (await res.json()) as { status: string; data: QueryData; error?: string }
        if (body.status !== 'success') throw new Error(`${who}: ${body.error}`)
        return body.data
      }
    const ask = askOf(promUrl, 'prometheus')
    const askVm = askOf(vmUrl, 'victoria-metrics')
    // The service's answer as a client of its HTTP API gets it: encoded and decoded as JSON.
    const viaJson = (d: QueryData): QueryData => (JSON.parse(JSON.stringify({ status: 'success', data: d })) as { data: QueryData }).data
    const instants = [base + 30 * MIN, base + 75 * MIN, base + 2 * 3600]
    const steps = [15, 60, 300]
    results.agreement = []
    const serviceMs: number[] = []
    const promMs: number[] = []
    const vmMs: number[] = []
    // Each side's answer or error: both refusing the query counts as agreeing.
    const settle = async <T>(p: Promise<T>) =>
      p.then(
        (v) => ({ v }),
        (e: Error) => ({ error: e.message }),
      )
    type Settled = { v?: QueryData; error?: string }
    const agrees = (x: Settled, y: Settled, who: string): string | null => {
      if (x.v && y.v) return compare(x.v, y.v)
      if (x.error && y.error) return null
      return `${who} ${x.error ?? 'answered'}, prometheus ${y.error ?? 'answered'}`
    }
    const timed = async <T>(list: number[], p: () => Promise<T>) => {
      const t0 = performance.now()
      const v = await settle(p())
      list.push(performance.now() - t0)
      return v
    }
    for (const query of corpus()) {
      const a: Agreement = { query, asked: 0, agreed: 0, vmAgreed: 0 }
      const check = (x: Settled, y: Settled, z: Settled, what: string) => {
        a.asked++
        const diff = agrees(x, y, 'service')
        if (diff === null) a.agreed++
        else a.firstDifference ??= `${what}: ${diff}`
        const vmDiff = agrees(z, y, 'victoria-metrics')
        if (vmDiff === null) a.vmAgreed! += 1
        else a.vmFirstDifference ??= `${what}: ${vmDiff}`
      }
      for (const t of instants) {
        const params = { query, time: String(t) }
        check(
          await settle(instantQuery(source, account.id, query, t)),
          await settle(ask('query', params)),
          await settle(askVm('query', params)),
          `instant ${t}`,
        )
      }
      for (const step of steps) {
        const [start, end] = [base + 20 * MIN, base + 2 * 3600]
        const params = { query, start: String(start), end: String(end), step: String(step) }
        const x = await timed(serviceMs, async () => viaJson(await rangeQuery(source, account.id, query, start, end, step)))
        const y = await timed(promMs, () => ask('query_range', params))
        const z = await timed(vmMs, () => askVm('query_range', params))
        check(x, y, z, `range step ${step}`)
      }
      results.agreement.push(a)
      say(
        `${a.agreed === a.asked && a.asked ? 'agree' : 'DIFFER'} ${a.agreed}/${a.asked} (victoria-metrics ${a.vmAgreed}/${a.asked})  ${query}${a.firstDifference ? `  (${a.firstDifference})` : ''}`,
      )
    }
    // Long ranges: each query LONG_ROUNDS times on all three, interleaved.
    results.longMs = []
    const names = new Map<number, string>([
      [process.pid, 'bench'],
      [prom.pid, 'prometheus'],
      [vm.pid, 'victoria-metrics'],
    ])
    await cpuDuring(
      names,
      async () => {
        for (const [days, step] of LONG_DAYS > 0
          ? ([
              [7, 300],
              [7, 900],
              [7, 3600],
              [LONG_DAYS, 3600],
            ] as const)
          : []) {
          const [start, end] = [longEnd - days * 86_400, longEnd]
          // README's bounds over rollups: a counter's total exact; rate within one sample interval's increase at
          // each edge of the window (times the series summed); a gauge's value within the range of its raw values
          // over the step's bucket, or over the window.
          const exact = (p: number, q: number) => Math.abs(p - q) <= 1e-9 * Math.max(1, Math.abs(q))
          const rateBound = (series: number, window: number) => (p: number, q: number) =>
            Math.abs(p - q) <= (2 * LONG_MAX_INC * series) / window + 1e-12
          const rangeOf = (span: number) => (p: number, _q: number, t: number) => {
            let [lo, hi] = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]
            for (let i = upperBound(lgTs, t - span - 1); i < lgTs.length && lgTs[i] < t; i++) {
              lo = Math.min(lo, lgVs[i])
              hi = Math.max(hi, lgVs[i])
            }
            return p >= lo - 1e-9 && p <= hi + 1e-9
          }
          // A 5-minute step is what Grafana asks of a week-wide panel, with its $__rate_interval (step + 15 s) for rate.
          const queries: Array<readonly [number, string, (p: number, q: number, t: number) => boolean]> =
            step === 300
              ? [
                  [1, 'rate(l{i="0"}[5m15s])', rateBound(1, 315)],
                  [100, 'sum(rate(l[5m15s]))', rateBound(100, 315)],
                  [100, 'l', exact],
                ]
              : [
                  [1, 'rate(l{i="0"}[1h])', rateBound(1, 3600)],
                  [1, 'l{i="0"}', exact],
                  [100, 'l', exact],
                  [100, 'last_over_time(l[1h])', exact],
                  [100, 'sum(rate(l[1h]))', rateBound(100, 3600)],
                  // A window much shorter than the step: 5-minute buckets over the whole span.
                  [100, 'sum(rate(l[5m]))', rateBound(100, 300)],
                  [1, 'wl', rangeOf(step)],
                  [1, 'avg_over_time(wl[1h])', rangeOf(3600)],
                  [1, 'last_over_time(wl[1h])', rangeOf(3600)],
                ]
          for (const [series, query, within] of queries) {
            const svc: number[] = []
            const ref: number[] = []
            const vms: number[] = []
            const params = { query, start: String(start), end: String(end), step: String(step) }
            let mine: QueryData | undefined
            let theirs: QueryData | undefined
            const failed = await rangeQuery(source, account.id, query, start, end, step).then(
              () => null,
              (e: Error) => e.message,
            )
            if (failed) {
              results.problems.push(`${days} d ${query} step ${step}: ${failed}`)
              say(`${days} d ${query} step ${step}: ${failed}`)
              continue
            }
            for (let r = 0; r < LONG_ROUNDS; r++) {
              let t0 = performance.now()
              mine = viaJson(await rangeQuery(source, account.id, query, start, end, step))
              svc.push(performance.now() - t0)
              t0 = performance.now()
              theirs = await ask('query_range', params)
              ref.push(performance.now() - t0)
              t0 = performance.now()
              await askVm('query_range', params)
              vms.push(performance.now() - t0)
            }
            const cmp = compareLong(mine!, theirs!, within)
            const row: LongRow = {
              days,
              series,
              query,
              step,
              service: pctOf(svc),
              prometheus: pctOf(ref),
              victoria: pctOf(vms),
              vsPrometheus: cmp.line,
              withinBound: cmp.within,
            }
            results.longMs!.push(row)
            if (!cmp.within) results.problems.push(`${days} d ${query} step ${step}: ${cmp.line}`)
            say(longLine(row))
          }
        }
      },
      (u) => void (results.othersCpuPct['long ranges'] = u.othersPct + u.unattributedPct),
    )
    results.rangeMs = { service: pctOf(serviceMs), prometheus: pctOf(promMs), victoria: pctOf(vmMs) }
    const agreed = results.agreement.filter((x) => x.asked && x.agreed === x.asked).length
    const vmAgreed = results.agreement.filter((x) => x.asked && x.vmAgreed === x.asked).length
    say(`${agreed} of ${results.agreement.length} queries agree in every instant and range answer`)
    say(`victoria-metrics: ${vmAgreed} of ${results.agreement.length} queries agree with Prometheus in every answer`)
    say(rangeLine(results.rangeMs))
    if (agreed < results.agreement.length) results.problems.push(`${results.agreement.length - agreed} queries disagree`)
    results.finishedAt = new Date().toISOString()
    return results
  } finally {
    for (const p of peers) await p.stop()
    await bench.close()
  }
}

const ms = (p: Pcts) => `p50 ${p.p50} p99 ${p.p99} ms`

function longLine(x: LongRow): string {
  const ratio = (p: Pcts) => round(x.service.p50 / p.p50, 2)
  return (
    `${x.days} d, ${x.series} series, ${x.query} step ${x.step} s: service ${ms(x.service)}; prometheus ${ms(x.prometheus)} ` +
    `(x${ratio(x.prometheus)}); victoria-metrics ${ms(x.victoria)} (x${ratio(x.victoria)}); vs prometheus: ${x.vsPrometheus}${x.withinBound ? '' : ' BEYOND BOUND'}`
  )
}

function rangeLine(r: { service: Pcts; prometheus: Pcts; victoria: Pcts }): string {
  return `query_range over 100 min (1 to 16 series): service ${ms(r.service)}; prometheus ${ms(r.prometheus)}; victoria-metrics ${ms(r.victoria)}`
}

if (isMain(import.meta.url))
  runStandalone(
    'promql-bench',
    'PromQL agreement with Prometheus',
    () => runPromqlBench(),
    (r) =>
      [
        ...(r.agreement ?? []).map(
          (a) =>
            `${a.agreed === a.asked && a.asked ? 'agree ' : 'DIFFER'} ${a.agreed}/${a.asked} (victoria-metrics ${a.vmAgreed}/${a.asked})  ${a.query}${a.firstDifference ? `  (${a.firstDifference})` : ''}${a.vmFirstDifference ? `  [victoria-metrics: ${a.vmFirstDifference}]` : ''}`,
        ),
        ...(r.rangeMs ? [rangeLine(r.rangeMs)] : []),
        ...(r.longMs ?? []).map(longLine),
      ].join('\n'),
  )
