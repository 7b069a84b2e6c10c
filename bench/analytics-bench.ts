// Analytics benchmark. Not a test: it prints figures, the
// targets beside them, and each figure as a ratio to a reference measured in
// the same run on the same data.
//
//   1. Threshold back-test: one gauge with one point per second over the last
//      30 days (2.6 M points; rollups built with SQL the way refreshRollups
//      builds them), then GET /api/v1/thresholds/suggest?stat=… (default 30d
//      lookback: 43,200 minutes, four candidate thresholds, each replayed
//      through the alert state machine) and the same with threshold= (one
//      replay) through a real API process with a business-plan Bearer key.
//      Target: under 200 ms. Reference: the bare read of the stat's 43,200
//      rollups_1m rows (SELECT in this process), the floor of any back-test
//      on the minute rollups.
//   2. Correlations: a target and BENCH_CORR_STATS other stats (500; half
//      counters, half gauges) with one point every 10 minutes over the last
//      30 days, GET /api/v1/correlations?stat=…&range=30d (Spearman on
//      differences, no lag), then max_lag=24 (49 shifts per stat). Target:
//      under 500 ms without lag. References: the bare read of the same
//      rollups_1h rows (SELECT), and readHourly() for the same stats (the
//      shared reading code) in this process.
//   3. The labelled correlation set (correlation-set.ts):
//      seeded stats that move together (shared spikes, a shared trend, a
//      copy two hours late) among stats that do not (independent noise on
//      the same daily cycle), every method scored with the route's own code.
//      Targets: every related pair in its target's top 3, every unrelated
//      pair under 0.3 in absolute value. Seeds 1-10 (the constants were set
//      on them) and 101-120 (checked), side by side. Run first, in process.
//
// Own database (metrics_bench_analytics, dropped at the end) and Redis prefix
// (deleted at the end) on the local PostgreSQL and Redis.
//
// Env: BENCH_CORR_STATS (500), BENCH_ANALYTICS_REQUESTS (20), BENCH_ANALYTICS_ONLY
// (labelled: the labelled set alone, no database), DATABASE_URL
// (server only; postgres://localhost), REDIS_URL (redis://127.0.0.1:6379).
import http from 'node:http'
import type { Sql } from '../shared/db.js'
import { HOUR, readHourly } from '../shared/stats/hourly.js'
import {
  beginBench,
  closingLines,
  busyLines,
  envInt,
  isFailed,
  isMain,
  machineLine,
  runStandalone,
  tableLines,
  type BenchResultsBase,
  type Failed,
} from './common.js'
import { freePort, HOST, waitForHttp200 } from './procs.js'
import { buildRollups, loadPoints, type PointJob } from './reads-bench.js'
import { CORR_SET_MAX_LAG, CORR_SET_TARGET, scoreCorrelationSet, type MethodScore } from './correlation-set.js'
import { createAccount } from './setup.js'
import { percentile, round } from './stats.js'

export const ANALYTICS_DB_NAME = 'metrics_bench_analytics'
export const ANALYTICS_TARGETS = { backtestMs: 200, correlationsMs: 500 } as const
const DAY = 86_400

interface Options {
  corrStats: number
  requests: number
}

interface Timing {
  p50: number
  p99: number
  n: number
}

interface Figure {
  name: string
  ms: Timing
  reference: string
  referenceMs: Timing
  targetMs?: number
  note: string
}

export interface AnalyticsBenchResults extends BenchResultsBase<Options> {
  setup?: { points: number; seconds: number }
  backtest?: Figure[] | Failed
  correlations?: Figure[] | Failed
  labelled?: Array<{ seeds: string; scores: MethodScore[] }>
}

function timing(samples: number[]): Timing {
  const s = [...samples].sort((a, b) => a - b)
  return { p50: round(percentile(s, 0.5), 1), p99: round(percentile(s, 0.99), 1), n: s.length }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 2 })

function get(port: number, path: string, key: string): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = http.get({ host: HOST, port, path, agent, headers: { authorization: `Bearer ${key}` }, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }),
      )
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within 60 s`)))
    req.on('error', reject)
  })
}

/** Runs `fn` a few times to warm up, then `n` times, timing each. */
async function measure(n: number, fn: () => Promise<unknown>, warm = 3): Promise<Timing> {
  for (let i = 0; i < warm; i++) await fn()
  const samples: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await fn()
    samples.push(performance.now() - t0)
  }
  return timing(samples)
}

export async function runAnalyticsBench(options: Partial<Options> & { log?: (l: string) => void } = {}): Promise<AnalyticsBenchResults> {
  const fromEnv: Options = { corrStats: envInt('BENCH_CORR_STATS', 500, 1), requests: envInt('BENCH_ANALYTICS_REQUESTS', 20, 1) }
  const { cfg, say, results, bench } = beginBench<Options, AnalyticsBenchResults>({
    tag: 'analytics-bench',
    dbName: ANALYTICS_DB_NAME,
    prefixLabel: 'benchanalytics',
    fromEnv,
    options,
  })
  const { databaseUrl, redisUrl, redisPrefix, children, seen, stage } = bench
  const problems = results.problems
  let sql: Sql | undefined
  try {
    results.labelled = [
      { seeds: '1-10 (set on)', scores: scoreCorrelationSet(Array.from({ length: 10 }, (_, i) => 1 + i)) },
      { seeds: '101-120 (checked)', scores: scoreCorrelationSet(Array.from({ length: 20 }, (_, i) => 101 + i)) },
    ]
    const byDefault = results.labelled.flatMap((l) => l.scores.filter((x) => x.method === 'departures'))
    for (const x of byDefault)
      if (x.relatedInTop < x.related || x.unrelatedOver)
        problems.push(
          `labelled set, departures: ${x.relatedInTop}/${x.related} related in the top ${CORR_SET_TARGET.topK}, ${x.unrelatedOver} unrelated at ${CORR_SET_TARGET.unrelatedBelow} or more`,
        )
    say('labelled correlation set scored')
    if (process.env.BENCH_ANALYTICS_ONLY === 'labelled') return results
    const t0 = performance.now()
    say(`creating database ${ANALYTICS_DB_NAME} and migrating`)
    sql = await bench.createDatabase('metrics-bench-analytics')
    const acct = await createAccount(sql, 'analytics')
    const nowS = Math.floor(Date.now() / 1000)
    const created = new Date((nowS - 40 * DAY) * 1000)
    const names = [
      { name: 'bench.persecond', kind: 'gauge' },
      { name: 'bench.target', kind: 'gauge' },
      ...Array.from({ length: cfg.corrStats }, (_, i) => ({
        name: `bench.s${String(i).padStart(4, '0')}`,
        kind: i % 2 ? 'gauge' : 'counter',
      })),
    ]
    const rows = await sql<{ id: string; name: string; kind: 'counter' | 'gauge' }[]>`
      insert into stats (account_id, name, kind, created_at)
      select ${acct.id}::uuid, n, k, ${created} from unnest(${names.map((s) => s.name)}::text[], ${names.map((s) => s.kind)}::text[]) as u(n, k)
      returning id, name, kind`
    const byName = new Map(rows.map((r) => [r.name, r]))
    const persecond = byName.get('bench.persecond')!
    const corr = rows.filter((r) => r.name !== 'bench.persecond')
    // 30 days and an hour up to now: the 30-day windows resolved a moment later are full.
    const from = nowS - 30 * DAY - 3600
    const jobs: PointJob[] = [
      { statId: persecond.id, n: nowS - from, fromS: from, toS: nowS, kind: 'gauge' },
      ...corr.map((s) => ({ statId: s.id, n: Math.floor((nowS - from) / 600), fromS: from, toS: nowS, kind: s.kind })),
    ]
    const total = jobs.reduce((s, j) => s + j.n, 0)
    say(
      `inserting ${total.toLocaleString('en-US')} points (${jobs[0].n.toLocaleString('en-US')} one a second, ${corr.length} stats one every 10 minutes)`,
    )
    await loadPoints(databaseUrl, sql, jobs, say)
    await buildRollups(
      sql,
      rows.map((r) => r.id),
    )
    await sql.unsafe('vacuum (analyze) points, rollups_1m, rollups_1h, rollups_1d, rollup_pending, stats')
    results.setup = { points: total, seconds: round((performance.now() - t0) / 1000, 1) }
    say(`setup done in ${results.setup.seconds} s`)

    const port = await freePort()
    const api = children.start('analytics-api', 'api/server.ts', {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    })
    seen.push(api)
    await waitForHttp200(`http://${HOST}:${port}/api/v1/health`, api, 120_000) // a loaded machine starts it slowly
    const call = async (path: string) => {
      const r = await get(port, path, acct.key)
      if (r.status !== 200) throw new Error(`GET ${path} answered HTTP ${r.status}: ${r.body.slice(0, 300)}`)
      return JSON.parse(r.body)
    }

    results.backtest = await stage('backtest', async () => {
      const minuteRows = () => {
        const to = Math.floor(Date.now() / 60_000) * 60
        return sql!`select bucket, count, sum from rollups_1m where stat_id = ${persecond.id} and bucket >= ${new Date((to - 30 * DAY) * 1000)} and bucket < ${new Date(to * 1000)}`
      }
      const reference = await measure(cfg.requests, minuteRows)
      const refRows = (await minuteRows()).length
      const out: Figure[] = []
      for (const [name, path] of [
        ['suggest (4 candidates)', '/api/v1/thresholds/suggest?stat=bench.persecond'],
        ['one threshold', '/api/v1/thresholds/suggest?stat=bench.persecond&threshold=99&cooldown_minutes=10'],
      ]) {
        const body = await call(path)
        if (body.basis.evaluations !== 43_200 || body.basis.minutes_with_value < 43_100)
          problems.push(
            `back-test ${name}: ${body.basis.evaluations} evaluations, ${body.basis.minutes_with_value} with a value (43,200 expected)`,
          )
        const ms = await measure(cfg.requests, () => call(path))
        say(`back-test ${name}: p50 ${ms.p50} ms (reference: ${refRows} minute rows read in ${reference.p50} ms)`)
        out.push({
          name: `back-test 30 d, ${name}`,
          ms,
          reference: `read of the ${refRows.toLocaleString('en-US')} rollups_1m rows`,
          referenceMs: reference,
          targetMs: ANALYTICS_TARGETS.backtestMs,
          note: `${body.suggestions.length} threshold(s), ${body.basis.evaluations} evaluations each`,
        })
      }
      return out
    }).catch((err: Error) => ({ error: err.message }))

    results.correlations = await stage('correlations', async () => {
      const ids = corr.map((s) => s.id)
      const window = () => {
        const to = Math.floor(Date.now() / 1000 / HOUR) * HOUR
        return { from: new Date((to - 30 * DAY) * 1000), to: new Date(to * 1000) }
      }
      const hourRows = () => {
        const w = window()
        return sql!`select stat_id, bucket, count, sum from rollups_1h where stat_id = any(${ids}::uuid[]) and bucket >= ${w.from} and bucket < ${w.to}`
      }
      const bare = await measure(cfg.requests, hourRows)
      const refRows = (await hourRows()).length
      const shared = await measure(cfg.requests, () => {
        const w = window()
        return readHourly(
          sql!,
          corr.map((s) => ({ id: s.id, kind: s.kind, since: created })),
          w.from,
          w.to,
        )
      })
      const out: Figure[] = []
      for (const [name, path, n, target] of [
        ['no lag', '/api/v1/correlations?stat=bench.target&range=30d', cfg.requests, ANALYTICS_TARGETS.correlationsMs],
        ['max_lag=24', '/api/v1/correlations?stat=bench.target&range=30d&max_lag=24', Math.max(3, Math.round(cfg.requests / 5)), undefined],
      ] as const) {
        const body = await call(path)
        const compared = body.results.length + body.excluded.length
        if (compared !== cfg.corrStats) problems.push(`correlations ${name}: ${compared} stats compared, ${cfg.corrStats} expected`)
        if (body.target_n < 700) problems.push(`correlations ${name}: the target rests on ${body.target_n} hours (about 719 expected)`)
        const ms = await measure(n, () => call(path), 1)
        say(
          `correlations ${name}: p50 ${ms.p50} ms for ${compared} stats (reference: ${refRows} hourly rows read in ${bare.p50} ms; readHourly ${shared.p50} ms)`,
        )
        out.push({
          name: `correlations 1 vs ${cfg.corrStats}, 30 d, ${name}`,
          ms,
          reference: `read of the ${refRows.toLocaleString('en-US')} rollups_1h rows`,
          referenceMs: bare,
          targetMs: target,
          note: `readHourly of the same stats in this process: p50 ${shared.p50} ms (${round(ms.p50 / shared.p50, 2)}x of it)`,
        })
      }
      return out
    }).catch((err: Error) => ({ error: err.message }))

    for (const c of seen)
      if (c.warnings)
        problems.push(
          `${c.name} wrote ${c.warnings} warning/error log line(s), e.g. ${c.lines
            .slice(0, 2)
            .map((l) => l.slice(0, 300))
            .join(' | ')}`,
        )
    for (const [name, x] of [
      ['backtest', results.backtest],
      ['correlations', results.correlations],
    ] as const)
      if (isFailed(x)) problems.push(`${name} FAILED: ${x.error}`)
    return results
  } finally {
    results.finishedAt = new Date().toISOString()
    agent.destroy()
    await bench.close()
  }
}

export function renderAnalyticsReport(r: AnalyticsBenchResults): string {
  const rows: string[][] = [['figure', 'p50 / p99 ms', 'reference p50 ms', 'ratio', 'target', '']]
  for (const part of [r.backtest, r.correlations]) {
    if (!part) continue
    if (isFailed(part)) {
      rows.push([`FAILED: ${part.error.slice(0, 100)}`, '', '', '', '', ''])
      continue
    }
    for (const f of part) {
      rows.push([
        f.name,
        `${f.ms.p50} / ${f.ms.p99}`,
        `${f.referenceMs.p50}`,
        `${round(f.ms.p50 / f.referenceMs.p50, 1)}x`,
        f.targetMs ? `< ${f.targetMs} ms` : '(none)',
        f.targetMs ? (f.ms.p50 < f.targetMs ? 'met' : 'NOT MET') : '',
      ])
    }
  }
  const out = ['', machineLine('analytics', r.machine)]
  if (r.setup) out.push(`setup: ${r.setup.points.toLocaleString('en-US')} points, rollups built, in ${r.setup.seconds} s`)
  out.push('', ...tableLines(rows, (c) => c >= 1 && c <= 3), '')
  if (r.labelled) {
    out.push(
      `labelled correlation set (range two weeks, transform diff, max_lag ${CORR_SET_MAX_LAG}; target: every related pair in its target's top ${CORR_SET_TARGET.topK}, every unrelated pair |coefficient| < ${CORR_SET_TARGET.unrelatedBelow}):`,
    )
    out.push(
      ...tableLines(
        [
          ['seeds', 'method', 'related in top 3', 'worst rank', 'min |r| related', 'unrelated >= 0.3', 'max |r| unrelated', ''],
          ...r.labelled.flatMap((l) =>
            l.scores.map((x) => [
              l.seeds,
              x.method,
              `${x.relatedInTop}/${x.related}`,
              String(x.worstRank),
              x.relatedMinAbs.toFixed(3),
              `${x.unrelatedOver}/${x.unrelated}`,
              x.unrelatedMaxAbs.toFixed(3),
              x.relatedInTop === x.related && !x.unrelatedOver ? 'met' : 'NOT MET',
            ]),
          ),
        ],
        (c) => c >= 2 && c <= 6,
      ),
      '',
    )
  }
  for (const part of [r.backtest, r.correlations])
    if (part && !isFailed(part)) for (const f of part) out.push(`${f.name}: reference = ${f.reference}; ${f.note}`)
  out.push(...busyLines(r.othersCpuPct), ...closingLines(r.problems, 'Nothing looked wrong: every answer complete, no warnings logged.'))
  return out.join('\n')
}

if (isMain(import.meta.url)) await runStandalone('analytics-bench', 'analytics bench', () => runAnalyticsBench(), renderAnalyticsReport)
