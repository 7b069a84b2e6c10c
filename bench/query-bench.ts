// Plain-language query benchmark (docs/decisions.md §D-T:
// questions). Not a test: it prints figures and the targets beside them.
//
//   1. Seeds one business account with 14 stats (8 counters, 6 gauges) and
//      70 days of points (about 100,000) through the persist path
//      (applyBatch), folds all but the last hour into the rollups, so that
//      reads cross both rollups and the not-yet-folded tail.
//   2. Quality: every corpus question (query-corpus.ts, query-holdout.ts)
//      answered by the engine (answerQuestion, no model) at a fixed `now` (a
//      whole minute), and judged against the oracle: right op, stat, window,
//      numbers in `data` and in the answer at the precision shown. Answerable
//      questions are correct, declined (honest, a miss) or wrong; questions
//      that must be declined are declined or wrong (answered with a number).
//      Held-out questions are reported separately.
//   3. Latency: every question BENCH_QUERY_ROUNDS (3) times through
//      POST /api/v1/query on an API served in this process, against the
//      reference GET /api/v1/stats/signups?range=24h (a chart read) measured in
//      the same run, interleaved.
//
// Own database (metrics_bench_query, dropped at the end) and Redis prefix
// (deleted at the end) on the local PostgreSQL and Redis.
//
// Env: BENCH_QUERY_ROUNDS (3), BENCH_QUERY_HOLDOUT (1; 0 leaves the held-out
// questions out), DATABASE_URL (server only), REDIS_URL.
import { startApi } from '../api/server.js'
import { loadConfig } from '../shared/config.js'
import type { Sql } from '../shared/db.js'
import type { QueuedPoint } from '../shared/jobs.js'
import { createLogger } from '../shared/log.js'
import { applyBatch } from '../shared/points/repo.js'
import { refreshRollups } from '../workers/refresh-rollups.js'
import { answerQuestion } from '../shared/query/engine.js'
import type { QueryResponse } from '../shared/query/schema.js'
import { seriesKey } from '../shared/ingest/tags.js'
import { createStats } from '../shared/stats/repo.js'
import { beginBench, closingLines, envInt, isMain, machineLine, runStandalone, tableLines, type BenchResultsBase } from './common.js'
import { buildCorpus, type Case } from './query-corpus.js'
import { buildHoldout } from './query-holdout.js'
import { HOUR, MIN, Oracle, seedPoints, seedStats, seriesName } from './query-seed.js'
import { createAccount } from './setup.js'
import { percentile, round } from './stats.js'

export const QUERY_DB_NAME = 'metrics_bench_query'
export const QUERY_TARGETS = { wrong: 0, p99Ms: 50 } as const

type Verdict = 'correct' | 'declined' | 'wrong'
interface Judged {
  q: string
  holdout: boolean
  mustDecline: boolean
  verdict: Verdict
  why?: string
  answer: string
  tags: string[]
  ms: number
}

interface QueryBenchResults extends BenchResultsBase<{ rounds: number; holdout: boolean }> {
  seed?: { stats: number; points: number; seconds: number }
  judged?: Judged[]
  engineMs?: { p50: number; p99: number }
  httpMs?: { p50: number; p99: number; n: number }
  chartMs?: { p50: number; p99: number; n: number }
}

// ---------------------------------------------------------------- judging

// Stat names, tagged series' names and their tags (`requests{host=web1}`, `host=web1`): quoted, never numbers.
const ALL_NAMES = seedStats(0).flatMap((s) => [
  s.name,
  ...(s.series ?? []).flatMap((tags) => [seriesName(s.name, tags), ...Object.entries(tags).map(([k, v]) => `${k}=${v}`)]),
])

/** Numbers as the answer shows them (stat names, dates and times left out), with their decimals. */
function shownNumbers(text: string): Array<{ x: number; decimals: number }> {
  let t = text
  for (const n of [...ALL_NAMES].sort((a, b) => b.length - a.length)) t = t.split(n).join(' ')
  t = t.replace(/\d{4}-\d{2}-\d{2}/g, ' ').replace(/\d{2}:\d{2}/g, ' ')
  return [...t.matchAll(/(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?/g)].map((m) => ({
    x: Number((m[1] + (m[2] ?? '')).replace(/,/g, '')),
    decimals: m[2] ? m[2].length - 1 : 0,
  }))
}

const close = (a: number, b: number) => Math.abs(Math.abs(a) - Math.abs(b)) <= 1e-6 * Math.max(1, Math.abs(b))
const iso = (t: number) => new Date(t * 1000).toISOString()

function judge(c: Case, r: QueryResponse): Omit<Judged, 'q' | 'holdout' | 'answer' | 'tags' | 'ms'> {
  const mustDecline = c.op === 'decline'
  const base = { mustDecline }
  if (r.intent.op === 'unknown') {
    if (r.data.length || shownNumbers(r.answer).length) return { ...base, verdict: 'wrong', why: 'a decline that states a number' }
    // A decline is correct only when its reason is true and it names what decision 13 asks for.
    if (mustDecline && c.reason && !c.reason.test(`${r.intent.reason ?? ''} ${r.answer}`))
      return { ...base, verdict: 'wrong', why: `declined for another reason: ${r.intent.reason ?? r.answer}` }
    const offered = ALL_NAMES.filter((n) =>
      new RegExp(`(^|[\\s,(])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([\\s,?.)]|$)`).test(r.answer),
    ).length
    if (mustDecline && c.namesCandidates && offered < c.namesCandidates)
      return { ...base, verdict: 'wrong', why: `declined naming ${offered} stats, at least ${c.namesCandidates} expected` }
    if (c.candidates && !c.candidates.every((n) => r.answer.includes(n)))
      return { ...base, verdict: mustDecline ? 'correct' : 'declined', why: `declined without naming ${c.candidates.join(', ')}` }
    return { ...base, verdict: mustDecline ? 'correct' : 'declined', why: mustDecline ? undefined : r.intent.reason }
  }
  if (mustDecline)
    return {
      ...base,
      verdict: 'wrong',
      why: `answered (${r.intent.op} ${r.intent.stats.slice(0, 2).join(', ')}) a question it must decline`,
    }
  const wrong = (why: string) => ({ ...base, verdict: 'wrong' as const, why })
  if (r.intent.op !== c.op) return wrong(`op ${r.intent.op}, expected ${c.op}`)
  if (c.stat && r.intent.stats[0] !== c.stat) return wrong(`stat ${r.intent.stats[0]}, expected ${c.stat}`)
  if (c.window && (r.intent.window?.from !== iso(c.window.from) || r.intent.window?.to !== iso(c.window.to))) {
    return wrong(`window ${r.intent.window?.from}..${r.intent.window?.to}, expected ${iso(c.window.from)}..${iso(c.window.to)}`)
  }
  if (!c.window && r.intent.window) return wrong('a window where none was asked')
  if (c.compareTo && (r.intent.compare_to?.from !== iso(c.compareTo.from) || r.intent.compare_to?.to !== iso(c.compareTo.to))) {
    return wrong(
      `compared with ${r.intent.compare_to?.from}..${r.intent.compare_to?.to}, expected ${iso(c.compareTo.from)}..${iso(c.compareTo.to)}`,
    )
  }
  if (c.context && (r.intent.context?.from !== iso(c.context.from) || r.intent.context?.to !== iso(c.context.to))) {
    return wrong(
      `context ${r.intent.context?.from}..${r.intent.context?.to}, expected the whole earlier period ${iso(c.context.from)}..${iso(c.context.to)}`,
    )
  }
  if (c.context && !r.intent.stretch) return wrong('a same-stretch comparison that does not say which stretch')
  if (c.top && r.data[0]?.stat !== c.top) return wrong(`ranked ${r.data[0]?.stat} first, expected ${c.top}`)
  if (c.buckets !== undefined && r.data.filter((d) => d.bucket_seconds).length !== c.buckets)
    return wrong(`${r.data.filter((d) => d.bucket_seconds).length} buckets in data, expected ${c.buckets}`)
  if (c.t !== undefined && r.data[0]?.t !== c.t) return wrong(`time ${r.data[0]?.t}, expected ${c.t}`)
  if (c.says && !c.says.test(r.answer)) return wrong(`the answer does not say ${c.says}`)
  const shown = shownNumbers(r.answer)
  for (const n of c.numbers ?? []) {
    const values = r.data.flatMap((d) => [d.value, d.min, d.max, d.n]).filter((v): v is number => typeof v === 'number')
    // A tolerance (percentiles from sketches): the data's value near enough, and that value is what the answer shows.
    const found = values.find((v) => (c.within ? Math.abs(v - n) <= c.within * Math.abs(n) : close(v, n)))
    if (found === undefined) return wrong(`${n} not in data${c.within ? ` within ${c.within * 100} %` : ''}`)
    const m = c.within ? found : n
    if (!shown.some((s) => Math.abs(s.x - Math.abs(m)) <= 0.5 * 10 ** -s.decimals + 1e-9 * Math.abs(m)))
      return wrong(`${m} not shown in the answer`)
  }
  if (!r.verifier.startsWith('passed')) return wrong(`verifier: ${r.verifier}`)
  return { ...base, verdict: 'correct' }
}

// ---------------------------------------------------------------- run

async function seed(sql: Sql, now: number): Promise<{ accountId: string; key: string; oracle: Oracle; points: number }> {
  const account = await createAccount(sql, 'query')
  const stats = seedStats(now)
  const made = await createStats(
    sql,
    account.id,
    stats.flatMap((s) => (s.series ? s.series.map((tags) => ({ name: s.name, kind: s.kind, tags })) : [{ name: s.name, kind: s.kind }])),
    1_000,
  )
  if (!(made instanceof Map)) throw new Error('could not create the seeded stats')
  const points = seedPoints(now, stats)
  const all: QueuedPoint[] = []
  // A tagged stat's points are its series' (the whole, under the stat's name, is the oracle's sum of them).
  const idOf = new Map<string, string>()
  for (const s of stats) {
    if (!s.series) idOf.set(s.name, made.get(s.name)!.stat.id)
    for (const tags of s.series ?? []) idOf.set(seriesName(s.name, tags), made.get(seriesKey(s.name, tags))!.stat.id)
  }
  for (const [name, pts] of points) {
    const id = idOf.get(name)
    if (id) for (const [t, v] of pts) all.push([id, t, v, null])
  }
  // Everything but the last hour is folded into the rollups; the last hour stays in the tail the reads union in.
  const older = all.filter((p) => p[1] < now - HOUR)
  const recent = all.filter((p) => p[1] >= now - HOUR)
  for (let i = 0; i < older.length; i += 5_000) await applyBatch(sql, `seed-${i}`, older.slice(i, i + 5_000))
  while ((await refreshRollups(sql)).rows > 0);
  await applyBatch(sql, 'seed-recent', recent)
  return {
    accountId: account.id,
    key: account.key,
    oracle: new Oracle(
      points,
      new Map(stats.map((s) => [s.name, s.kind])),
      // Every series and tag value's group of series (`requests{host=web1}`), of its stat's kind.
      new Map(
        [...points.keys()]
          .filter((n) => n.includes('{'))
          .map((n) => [n, stats.find((s) => s.name === n.slice(0, n.indexOf('{')))!.kind] as const),
      ),
    ),
    points: all.length,
  }
}

const ms = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return { p50: round(percentile(s, 0.5), 2), p99: round(percentile(s, 0.99), 2), n: s.length }
}

export async function runQueryBench(
  options: { rounds?: number; holdout?: boolean; log?: (l: string) => void } = {},
): Promise<QueryBenchResults> {
  const fromEnv = { rounds: envInt('BENCH_QUERY_ROUNDS', 3, 1), holdout: process.env.BENCH_QUERY_HOLDOUT !== '0' }
  const { cfg, say, results, bench } = beginBench<{ rounds: number; holdout: boolean }, QueryBenchResults>({
    tag: 'query-bench',
    dbName: QUERY_DB_NAME,
    prefixLabel: 'benchq',
    fromEnv,
    options,
  })
  try {
    const sql = await bench.createDatabase('metrics-bench-query')
    const now = Math.floor(Date.now() / 1000 / MIN) * MIN
    const started = performance.now()
    const { accountId, key, oracle, points } = await seed(sql, now)
    results.seed = { stats: oracle.kinds.size, points, seconds: round((performance.now() - started) / 1000, 1) }
    say(`seeded ${points} points in ${results.seed.seconds} s`)

    const cases = [...buildCorpus(oracle, now), ...(cfg.holdout ? buildHoldout(oracle, now) : [])]
    const engineTimes: number[] = []
    results.judged = []
    for (const c of cases) {
      const t0 = performance.now()
      const r = await answerQuestion({ sql, config: { queryLlm: undefined } }, accountId, { query: c.q }, new Date(now * 1000))
      const took = performance.now() - t0
      engineTimes.push(took)
      results.judged.push({ q: c.q, holdout: Boolean(c.holdout), answer: r.answer, tags: c.tags, ...judge(c, r), ms: round(took, 1) })
    }
    results.engineMs = ms(engineTimes)

    // Latency through HTTP, interleaved with the chart-read reference.
    const config = loadConfig({
      NODE_ENV: 'production',
      PUBLIC_URL: 'http://127.0.0.1',
      PORT: '0',
      DATABASE_URL: bench.databaseUrl,
      REDIS_URL: bench.redisUrl,
      REDIS_PREFIX: bench.redisPrefix,
      LOG_LEVEL: 'error',
    })
    const api = await startApi(config, createLogger(config))
    try {
      const http: number[] = []
      const chart: number[] = []
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
      for (let round = 0; round < cfg.rounds; round++) {
        for (const c of cases) {
          let t0 = performance.now()
          const res = await fetch(`${api.url}/api/v1/query`, { method: 'POST', headers, body: JSON.stringify({ query: c.q }) })
          await res.text()
          http.push(performance.now() - t0)
          if (res.status !== 200) results.problems.push(`HTTP ${res.status} for "${c.q}"`)
          t0 = performance.now()
          const ref = await fetch(`${api.url}/api/v1/stats/signups?range=24h`, { headers })
          await ref.text()
          chart.push(performance.now() - t0)
        }
      }
      results.httpMs = ms(http)
      results.chartMs = ms(chart)
    } finally {
      await api.close()
    }
    const wrong = results.judged.filter((j) => j.verdict === 'wrong')
    if (wrong.length) results.problems.push(`${wrong.length} wrong answer(s)`)
    if (results.httpMs.p99 > QUERY_TARGETS.p99Ms)
      results.problems.push(`p99 ${results.httpMs.p99} ms over the ${QUERY_TARGETS.p99Ms} ms target`)
    results.finishedAt = new Date().toISOString()
    return results
  } finally {
    await bench.close()
  }
}

// ---------------------------------------------------------------- report

function shareLines(label: string, js: Judged[]): string[][] {
  const answerable = js.filter((j) => !j.mustDecline)
  const declinable = js.filter((j) => j.mustDecline)
  const pct = (n: number, of: number) => (of ? `${round((100 * n) / of, 1)}%` : '-')
  const count = (xs: Judged[], v: Verdict) => xs.filter((j) => j.verdict === v).length
  const correct = count(answerable, 'correct') + count(declinable, 'correct')
  return [
    [
      label,
      String(js.length),
      pct(correct, js.length),
      pct(count(answerable, 'declined'), js.length),
      pct(count(js, 'wrong'), js.length),
      `${count(answerable, 'correct')}/${answerable.length}`,
      `${count(declinable, 'correct')}/${declinable.length}`,
    ],
  ]
}

export function renderQueryReport(r: QueryBenchResults): string {
  const lines = [machineLine('query', r.machine), '']
  if (r.seed) lines.push(`seeded account: ${r.seed.stats} stats, ${r.seed.points} points over 70 days (${r.seed.seconds} s)`, '')
  const js = r.judged ?? []
  const dev = js.filter((j) => !j.holdout)
  const held = js.filter((j) => j.holdout)
  lines.push(
    ...tableLines(
      [
        ['questions', 'n', 'correct', 'declined (honest miss)', 'wrong', 'answerable right', 'must-decline declined'],
        ...shareLines('corpus', dev),
        ...(held.length ? shareLines('held out', held) : []),
        ...shareLines('all', js),
      ],
      (c) => c > 0,
    ),
    '',
  )
  lines.push(
    '"correct" counts answerable questions answered right and must-decline questions declined; "declined" counts answerable questions the engine declined honestly (no number).',
    '',
  )
  if (r.engineMs && r.httpMs && r.chartMs) {
    lines.push(
      ...tableLines(
        [
          ['latency (ms)', 'p50', 'p99', 'n'],
          ['POST /api/v1/query (HTTP, no model)', String(r.httpMs.p50), String(r.httpMs.p99), String(r.httpMs.n)],
          ['reference: GET /api/v1/stats/signups?range=24h', String(r.chartMs.p50), String(r.chartMs.p99), String(r.chartMs.n)],
          ['engine alone (in process)', String(r.engineMs.p50), String(r.engineMs.p99), String(js.length)],
        ],
        (c) => c > 0,
      ),
    )
    lines.push(
      `query / chart read: p50 ${round(r.httpMs.p50 / r.chartMs.p50, 2)}x, p99 ${round(r.httpMs.p99 / r.chartMs.p99, 2)}x; target p99 under ${QUERY_TARGETS.p99Ms} ms, wrong answers ${QUERY_TARGETS.wrong}`,
    )
    lines.push(
      `slowest in the engine: ${[...js]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map((j) => `"${j.q}" ${j.ms} ms`)
        .join(', ')}`,
      '',
    )
  }
  const notable = js.filter((j) => j.verdict !== 'correct')
  if (notable.length) {
    lines.push('Not correct:')
    for (const j of notable)
      lines.push(`  [${j.verdict}${j.holdout ? ', held out' : ''}] ${j.q}  ->  ${j.why ?? ''}`, `      answer: ${j.answer}`)
  }
  return [...lines, ...closingLines(r.problems, 'ok: no wrong answer')].join('\n')
}

if (isMain(import.meta.url)) await runStandalone('query-bench', 'query bench', () => runQueryBench(), renderQueryReport)
