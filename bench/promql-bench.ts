// PromQL agreement with Prometheus itself (docs/decisions.md §25). Not a test: it prints a table.
//
//   1. The same samples go to the service (through the persist path, applyBatch, as counters' increments and
//      gauges' values) and to Debian's Prometheus (remote write, on its own port and data directory under /tmp,
//      loopback only): gauges g0..g9 (random walks), a gauge r0 holding a cumulative count with resets, and
//      counters c0..c4 (Prometheus gets their running totals). Two hours, a sample every 15 s, 7 s past the
//      grid, so no sample sits on a window's edge (Prometheus 2.42's windows are closed, ours left-open).
//   2. A corpus of queries (every supported function and operator, counters and gauges), each asked as an
//      instant query at three times and as range queries at three steps, of both; answers compared series by
//      series within 1e-9 relative. Agreement is reported per query.
//   3. query_range latency of the corpus on both (the service's engine in process over PostgreSQL; Prometheus
//      over HTTP on loopback), and over 7 and 30 days for 1 and 100 series: 100 counters over
//      BENCH_PROMQL_DAYS (30) days, a sample every BENCH_PROMQL_LONG_STEP (120) s, written before the rest
//      (Prometheus takes remote-written samples in time order), BENCH_PROMQL_ROUNDS (10) rounds interleaved.
//
// Own database (metrics_bench_promql, dropped at the end) and Redis prefix. Env: PROMETHEUS_BIN (prometheus).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import protobuf from 'protobufjs'
import { compressSync } from 'snappy'
import { applyBatch } from '../shared/points/repo.js'
import { refreshRollups } from '../workers/refresh-rollups.js'
import type { QueuedPoint } from '../shared/jobs.js'
import { instantQuery, type QueryData, rangeQuery } from '../shared/promql/engine.js'
import { statsSource } from '../shared/promql/source.js'
import { createStats } from '../shared/stats/repo.js'
import { beginBench, isMain, runStandalone, type BenchResultsBase } from './common.js'
import { createAccount } from './setup.js'
import { percentile, round } from './stats.js'
import { closedPortNumber } from './promql-port.js'

const WriteRequest = protobuf
  .parse(
    `syntax = "proto3"; package prometheus;
message WriteRequest { repeated TimeSeries timeseries = 1; }
message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
message Label { string name = 1; string value = 2; }
message Sample { double value = 1; int64 timestamp = 2; }`,
  )
  .root.lookupType('prometheus.WriteRequest')

const MIN = 60
const STEP_SAMPLES = 15

interface Agreement {
  query: string
  asked: number
  agreed: number
  firstDifference?: string
}

interface PromqlBenchResults extends BenchResultsBase<Record<string, never>> {
  samples?: number
  agreement?: Agreement[]
  rangeMs?: { service: { p50: number; p99: number }; prometheus: { p50: number; p99: number } }
  longMs?: Array<{ days: number; series: number; query: string; step: number; service: Pcts; prometheus: Pcts }>
}

type Pcts = { p50: number; p99: number }
const pctOf = (xs: number[]): Pcts => {
  const s = [...xs].sort((p, q) => p - q)
  return { p50: round(percentile(s, 0.5), 1), p99: round(percentile(s, 0.99), 1) }
}

const LONG_DAYS = Number(process.env.BENCH_PROMQL_DAYS ?? 30)
const LONG_STEP = Number(process.env.BENCH_PROMQL_LONG_STEP ?? 120)
const LONG_ROUNDS = Number(process.env.BENCH_PROMQL_ROUNDS ?? 10)

async function remoteWrite(url: string, timeseries: unknown[]): Promise<void> {
  const body = WriteRequest.encode(WriteRequest.fromObject({ timeseries })).finish()
  const res = await fetch(`${url}/api/v1/write`, {
    method: 'POST',
    body: new Uint8Array(compressSync(Buffer.from(body))),
    headers: { 'content-encoding': 'snappy', 'content-type': 'application/x-protobuf', 'x-prometheus-remote-write-version': '0.1.0' },
  })
  if (res.status !== 204) throw new Error(`remote write: ${res.status} ${await res.text()}`)
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

export async function runPromqlBench(options: { log?: (l: string) => void } = {}): Promise<PromqlBenchResults> {
  const { say, results, bench } = beginBench<Record<string, never>, PromqlBenchResults>({
    tag: 'promql-bench',
    dbName: 'metrics_bench_promql',
    prefixLabel: 'benchpq',
    fromEnv: {},
    options,
  })
  const dir = mkdtempSync(join(tmpdir(), 'promql-bench-'))
  const port = await closedPortNumber()
  writeFileSync(join(dir, 'prometheus.yml'), 'global: {}\n')
  const prom = spawn(
    process.env.PROMETHEUS_BIN ?? 'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-remote-write-receiver',
    ],
    { stdio: 'ignore' },
  )
  const promUrl = `http://127.0.0.1:${port}`
  try {
    for (let i = 0; ; i++) {
      const ok = await fetch(`${promUrl}/-/ready`).then(
        (r) => r.ok,
        () => false,
      )
      if (ok) break
      if (i > 100) throw new Error('prometheus did not become ready')
      await new Promise((r) => setTimeout(r, 200))
    }
    const sql = await bench.createDatabase('metrics-bench-promql')
    const account = await createAccount(sql, 'promql')
    const now = Math.floor(Date.now() / 1000 / MIN) * MIN
    // Long ranges first (Prometheus takes remote-written samples in time order): 100 counters over LONG_DAYS,
    // a sample every LONG_STEP seconds, ending 3 hours back; the service folds them into its rollups.
    const longEnd = now - 3 * 3600
    const longStart = longEnd - LONG_DAYS * 86_400
    const longStats = await createStats(
      sql,
      account.id,
      Array.from({ length: 100 }, (_, i) => ({ name: `l${i}`, kind: 'counter' as const })),
      1000,
    )
    if (!(longStats instanceof Map)) throw new Error('could not create the long-range stats')
    const ids = Array.from({ length: 100 }, (_, i) => longStats.get(`l${i}`)!.stat.id)
    const totals = new Array<number>(100).fill(0)
    let longSamples = 0
    const seeded = performance.now()
    for (let t0 = longStart; t0 < longEnd; t0 += 6 * 3600) {
      const rows: QueuedPoint[] = []
      const timeseries = ids.map((id, k) => {
        const samples: Array<{ value: number; timestamp: number }> = []
        for (let t = t0; t < Math.min(t0 + 6 * 3600, longEnd); t += LONG_STEP) {
          const inc = 1 + ((t / LONG_STEP + k) % 7)
          totals[k] += inc
          rows.push([id, t + 7, inc, null])
          samples.push({ value: totals[k], timestamp: (t + 7) * 1000 })
        }
        return { labels: [{ name: '__name__', value: `l${k}` }], samples }
      })
      longSamples += rows.length
      for (let i = 0; i < rows.length; i += 20_000) await applyBatch(sql, `long-${t0}-${i}`, rows.slice(i, i + 20_000))
      await remoteWrite(promUrl, timeseries)
    }
    while ((await refreshRollups(sql)).rows > 0);
    say(`${longSamples} long-range samples in both in ${round((performance.now() - seeded) / 1000, 1)} s`)
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
        promUrl,
        data.map((s) => ({
          labels: [{ name: '__name__', value: s.name }],
          samples: s.ts.slice(i, i + 20).map((t, j) => ({ value: s.promValues[i + j], timestamp: t * 1000 })),
        })),
      )
    results.samples = points.length
    say(`${points.length} samples in both`)

    const source = statsSource((fn) => fn(sql))
    const ask = async (path: string, params: Record<string, string>) => {
      const res = await fetch(`${promUrl}/api/v1/${path}?${new URLSearchParams(params)}`)
      const body = (await res.json()) as { status: string; data: QueryData; error?: string }
      if (body.status !== 'success') throw new Error(`prometheus: ${body.error}`)
      return body.data
    }
    const instants = [base + 30 * MIN, base + 75 * MIN, base + 2 * 3600]
    const steps = [15, 60, 300]
    results.agreement = []
    const serviceMs: number[] = []
    const promMs: number[] = []
    for (const query of corpus()) {
      const a: Agreement = { query, asked: 0, agreed: 0 }
      const check = (x: QueryData, y: QueryData, what: string) => {
        a.asked++
        const diff = compare(x, y)
        if (diff === null) a.agreed++
        else a.firstDifference ??= `${what}: ${diff}`
      }
      // Each side's answer or error: both refusing the query counts as agreeing.
      const settle = async <T>(p: Promise<T>) =>
        p.then(
          (v) => ({ v }),
          (e: Error) => ({ error: e.message }),
        )
      const both = async (x: { v?: QueryData; error?: string }, y: { v?: QueryData; error?: string }, what: string) => {
        if (x.v && y.v) return check(x.v, y.v, what)
        a.asked++
        if (x.error && y.error) a.agreed++
        else a.firstDifference ??= `${what}: service ${x.error ?? 'answered'}, prometheus ${y.error ?? 'answered'}`
      }
      for (const t of instants)
        await both(
          await settle(instantQuery(source, account.id, query, t)),
          await settle(ask('query', { query, time: String(t) })),
          `instant ${t}`,
        )
      for (const step of steps) {
        const [start, end] = [base + 20 * MIN, base + 2 * 3600]
        let t0 = performance.now()
        const x = await settle(rangeQuery(source, account.id, query, start, end, step))
        serviceMs.push(performance.now() - t0)
        t0 = performance.now()
        const y = await settle(ask('query_range', { query, start: String(start), end: String(end), step: String(step) }))
        promMs.push(performance.now() - t0)
        await both(x, y, `range step ${step}`)
      }
      results.agreement.push(a)
      say(
        `${a.agreed === a.asked && a.asked ? 'agree' : 'DIFFER'} ${a.agreed}/${a.asked}  ${query}${a.firstDifference ? `  (${a.firstDifference})` : ''}`,
      )
    }
    // Long ranges: each query LONG_ROUNDS times on both, interleaved.
    results.longMs = []
    for (const days of [7, LONG_DAYS]) {
      const [start, end] = [longEnd - days * 86_400, longEnd]
      const step = days <= 7 ? 900 : 3600
      for (const [series, query] of [
        [1, 'rate(l0[1h])'],
        [1, 'l0'],
        [100, '{__name__=~"l.*"}'],
        [100, 'last_over_time({__name__=~"l.*"}[1h])'],
      ] as const) {
        const svc: number[] = []
        const ref: number[] = []
        for (let r = 0; r < LONG_ROUNDS; r++) {
          let t0 = performance.now()
          await rangeQuery(source, account.id, query, start, end, step)
          svc.push(performance.now() - t0)
          t0 = performance.now()
          await ask('query_range', { query, start: String(start), end: String(end), step: String(step) })
          ref.push(performance.now() - t0)
        }
        const row = { days, series, query, step, service: pctOf(svc), prometheus: pctOf(ref) }
        results.longMs.push(row)
        say(
          `${days} d, ${series} series, ${query} step ${step}s: service p50 ${row.service.p50} p99 ${row.service.p99} ms; prometheus p50 ${row.prometheus.p50} p99 ${row.prometheus.p99} ms`,
        )
      }
    }
    const pct = (xs: number[]) => {
      const s = [...xs].sort((p, q) => p - q)
      return { p50: round(percentile(s, 0.5), 2), p99: round(percentile(s, 0.99), 2) }
    }
    results.rangeMs = { service: pct(serviceMs), prometheus: pct(promMs) }
    const agreed = results.agreement.filter((x) => x.asked && x.agreed === x.asked).length
    say(`${agreed} of ${results.agreement.length} queries agree in every instant and range answer`)
    say(
      `query_range over 100 min (1 to 16 series): service p50 ${results.rangeMs.service.p50} ms p99 ${results.rangeMs.service.p99} ms; prometheus p50 ${results.rangeMs.prometheus.p50} ms p99 ${results.rangeMs.prometheus.p99} ms`,
    )
    if (agreed < results.agreement.length) results.problems.push(`${results.agreement.length - agreed} queries disagree`)
    results.finishedAt = new Date().toISOString()
    return results
  } finally {
    prom.kill('SIGTERM')
    await new Promise((r) => prom.once('exit', r))
    rmSync(dir, { recursive: true, force: true })
    await bench.close()
  }
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
            `${a.agreed === a.asked && a.asked ? 'agree ' : 'DIFFER'} ${a.agreed}/${a.asked}  ${a.query}${a.firstDifference ? `  (${a.firstDifference})` : ''}`,
        ),
        `query_range: service p50 ${r.rangeMs?.service.p50} ms p99 ${r.rangeMs?.service.p99} ms; prometheus p50 ${r.rangeMs?.prometheus.p50} ms p99 ${r.rangeMs?.prometheus.p99} ms`,
        ...(r.longMs ?? []).map(
          (x) =>
            `${x.days} d, ${x.series} series, ${x.query} (step ${x.step} s): service p50 ${x.service.p50} p99 ${x.service.p99} ms; prometheus p50 ${x.prometheus.p50} p99 ${x.prometheus.p99} ms`,
        ),
      ].join('\n'),
  )
