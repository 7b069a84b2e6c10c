// Anomaly detection benchmark. Not a test: it prints
// figures and the targets beside them.
//
//   1. Quality on labelled data, through the back-test replay
//      (shared/anomalies/backtest.ts, the code GET /api/v1/anomalies/backtest
//      and the sweep run), with a plain 3-sigma z-score over the same trailing
//      window measured on the same series in the same run:
//      a. NAB (../shared/data/nab/ beside the project: data/**/*.csv with
//         timestamp,value and labels/combined_windows.json), bucketed hourly
//         (gauge means). Skipped with a line saying so when the folder is absent.
//      b. The seeded synthetic corpus (bench/anomaly-corpus.ts). The
//         detector's constants were tuned on seed 1 only; figures are reported
//         on BENCH_ANOMALY_SEED (a different seed).
//      Per group: labelled windows found (recall) and flagged hours outside any
//      window per 1,000 hours scored.
//   2. Sweep speed: BENCH_SWEEP_STATS stats (10,000; half counters, half
//      gauges) of one business account with 7 days of hourly history, written
//      straight into the hourly rollup by one generate_series statement. First
//      sight: the sweeps that see every stat afresh and replay its history (each
//      starts no replay past its budget, REPLAY_BUDGET_MS; the rest wait for the
//      next sweep), until none is left. Then the steady state: BENCH_SWEEP_RUNS
//      (3) times, one more hour written and a sweep that steps it for every stat.
//      Wall time and this process' CPU time of each sweep; reference measured in
//      the same run, before each phase: reading the same history alone
//      (readHourly), so the ratio shows what scoring adds.
//
// Own database (metrics_bench_anomalies, dropped at the end) on the local PostgreSQL.
// Env: BENCH_ANOMALY_SEED (20261123), BENCH_ANOMALY_PER_GROUP (40), BENCH_SWEEP_STATS (10000; 0 skips part 2), BENCH_SWEEP_RUNS (3
// steady sweeps), BENCH_NAB_DIR (default ../shared/data/nab beside the project), BENCH_NAB_GROUPS (comma-separated NAB group
// names, e.g. realAWSCloudwatch,realAdExchange: score only these; default all), BENCH_NAB_HALF (`tune`: score only the
// tuning half, so that choosing a setting never shows the held-out figures; default both), DATABASE_URL.
import { HOUR, SENSITIVITIES, SENSITIVITY_THRESHOLD } from '../shared/anomalies/detector.js'
import { newestCompleteHour, sweep } from '../shared/anomalies/sweep.js'
import type { Sql } from '../shared/db.js'
import { readHourly } from '../shared/stats/hourly.js'
import { usesTimescale } from '../shared/points/storage.js'
import { refreshRollups } from '../workers/refresh-rollups.js'
import {
  beginBench,
  busyLines,
  closingLines,
  envInt,
  isMain,
  machineLine,
  runStandalone,
  tableLines,
  type BenchResultsBase,
} from './common.js'
import { corpus, SCORE_FROM, type LabelledSeries } from './anomaly-corpus.js'
import { detectorFlags, emptyTally, falsePer1000, nabNormalised, recall, tally, zscoreFlags, type Tally } from './anomaly-score.js'
import { loadNab, NAB_DIR, nabLayout } from './nab.js'
import { round } from './stats.js'

export const ANOMALIES_DB_NAME = 'metrics_bench_anomalies'
export const TUNING_SEED = 1
export const TARGETS = { spikeRecall: 0.9, cleanFalsePer1000: 1, sweepSeconds: 10, nabFalseShareOfZ: 1 / 3, nabScore: 65 } as const

interface Options {
  seed: number
  perGroup: number
  sweepStats: number
  sweepRuns: number
}

export interface GroupRow {
  group: string
  series: number
  detector: Tally
  zscore: Tally
}

interface Results extends BenchResultsBase<Options> {
  nab?: { skipped: string } | { rows: GroupRow[]; tune: GroupRow[]; heldOut: GroupRow[]; curve: CurveRow[] }
  synthetic?: GroupRow[]
  sweep?: {
    stats: number
    hours: number
    seedMs: number
    /** Reading every stat's week alone, just before the first sight. */
    readMs: number
    /** The sweeps that see every stat afresh and replay its history, until none is left for the next. */
    first: SweepTiming[]
    /** Then one new hour per stat, BENCH_SWEEP_RUNS times: each sweep beside a bare read of the week it scores. */
    steady: Array<{ readMs: number; sweep: SweepTiming }>
  }
}

/** One sweep: wall and CPU milliseconds, stats scored, hours stepped, replays left for the next sweep. */
interface SweepTiming {
  ms: number
  cpuMs: number
  scored: number
  hours: number
  deferred: number
}

/** The NAB half to score (BENCH_NAB_HALF=tune: the tuning half alone, for choosing a setting), or both when unset. */
const NAB_HALF = process.env.BENCH_NAB_HALF === 'tune' ? 'tune' : null

/** NAB groups to score (BENCH_NAB_GROUPS), or all when unset. */
const NAB_GROUPS = (process.env.BENCH_NAB_GROUPS ?? '')
  .split(',')
  .map((g) => g.trim())
  .filter(Boolean)

function fromEnv(): Options {
  return {
    seed: envInt('BENCH_ANOMALY_SEED', 20261123, 0),
    perGroup: envInt('BENCH_ANOMALY_PER_GROUP', 40, 1),
    sweepStats: envInt('BENCH_SWEEP_STATS', 10_000, 0),
    sweepRuns: envInt('BENCH_SWEEP_RUNS', 3, 1),
  }
}

/** One point of the sensitivity curve: a setting of the detector or of the z-score, pooled over a set of series. */
export interface CurveRow {
  setting: string
  all: Tally
  heldOut: Tally
}

/** The detector at each sensitivity and the z-score at 2.5, 3 and 3.5 sigma over the same series (docs/decisions.md §16). */
export function curve(series: Array<LabelledSeries & { probation: number; half: string }>): CurveRow[] {
  const row = (setting: string, flags: (s: (typeof series)[number]) => boolean[]): CurveRow => {
    const r: CurveRow = { setting, all: emptyTally(), heldOut: emptyTally() }
    for (const s of series) {
      const f = flags(s)
      tally(r.all, f, s.windows, s.probation)
      if (s.half === 'held-out') tally(r.heldOut, f, s.windows, s.probation)
    }
    return r
  }
  return [
    ...SENSITIVITIES.map((k) =>
      row(`detector ${k} (${SENSITIVITY_THRESHOLD[k]} spreads)`, (s) => detectorFlags(s.kind, s.values, s.probation, k)),
    ),
    ...[2.5, 3, 3.5].map((z) => row(`z-score ${z} sigma`, (s) => zscoreFlags(s.values, s.probation, z))),
  ]
}

export function score<S extends LabelledSeries>(series: S[], lo: (s: S) => number): GroupRow[] {
  const groups = new Map<string, GroupRow>()
  for (const s of series) {
    const g = groups.get(s.group) ?? { group: s.group, series: 0, detector: emptyTally(), zscore: emptyTally() }
    groups.set(s.group, g)
    g.series++
    tally(g.detector, detectorFlags(s.kind, s.values, lo(s)), s.windows, lo(s))
    tally(g.zscore, zscoreFlags(s.values, lo(s)), s.windows, lo(s))
  }
  return [...groups.values()]
}

// ------------------------------------------------------------------ sweep speed

async function seedHistory(db: Sql, stats: number, newest: number): Promise<{ accountId: string }> {
  const [acc] = await db<{ id: string }[]>`insert into accounts (email, plan) values ('bench@example.com', 'business') returning id`
  await db`insert into stats (account_id, name, kind) select ${acc.id}, 'stat.' || i, case when i % 2 = 0 then 'counter' else 'gauge' end from generate_series(1, ${stats}) i`
  await writeHour(db, newest - 167 * HOUR, newest)
  return { accountId: acc.id }
}

/** One value per stat per hour in [from, to], noisy around a per-stat level; straight into the hourly rollup (or as points under TimescaleDB). */
async function writeHour(db: Sql, from: number, to: number): Promise<void> {
  const value = db`(100 + (abs(hashtext(s.id::text)) % 900)) * (1 + 0.05 * sin(extract(epoch from h) / 3600 * 1.3 + abs(hashtext(s.id::text)) % 7))`
  if (await usesTimescale(db)) {
    await db`insert into points (stat_id, ts, value) select s.id, h + interval '30 minutes', round(${value}) from stats s, generate_series(to_timestamp(${from}), to_timestamp(${to}), interval '1 hour') h`
    await refreshRollups(db)
  } else {
    await db`insert into rollups_1h (stat_id, bucket, count, sum, min, max)
             select s.id, h, 1, round(${value}), round(${value}), round(${value}) from stats s, generate_series(to_timestamp(${from}), to_timestamp(${to}), interval '1 hour') h`
  }
  await db`insert into rollup_state (stat_id, refreshed_at) select id, now() from stats on conflict (stat_id) do update set refreshed_at = excluded.refreshed_at`
  await db`analyze rollups_1h`.catch(() => {})
}

/** Wall and this process' CPU milliseconds of one call. */
async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number }> {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const value = await run()
  const ms = performance.now() - t0
  const c = process.cpuUsage(c0)
  return { value, ms, cpuMs: (c.user + c.system) / 1000 }
}

async function timeRead(db: Sql, newest: number): Promise<number> {
  const stats = await db<{ id: string; kind: 'counter' | 'gauge'; created_at: Date }[]>`select id, kind, created_at from stats order by id`
  const t0 = performance.now()
  for (let p = 0; p < stats.length; p += 500) {
    await readHourly(
      db,
      stats.slice(p, p + 500).map((s) => ({ id: s.id, kind: s.kind, since: s.created_at })),
      new Date((newest - 167 * HOUR) * 1000),
      new Date((newest + HOUR) * 1000),
    )
  }
  return performance.now() - t0
}

// ------------------------------------------------------------------ run

export async function runAnomaliesBench(options: Partial<Options> & { log?: (l: string) => void } = {}): Promise<Results> {
  const { cfg, say, results, bench } = beginBench<Options, Results>({
    tag: 'anomalies-bench',
    dbName: ANOMALIES_DB_NAME,
    prefixLabel: 'benchanom',
    fromEnv: fromEnv(),
    options,
  })
  const problems = results.problems
  try {
    if (cfg.seed === TUNING_SEED)
      problems.push(`BENCH_ANOMALY_SEED is the tuning seed (${TUNING_SEED}): the synthetic figures are not on unseen data`)
    if (nabLayout()) {
      say('NAB: scoring')
      const series = loadNab(NAB_GROUPS).filter((s) => NAB_HALF === null || s.half === NAB_HALF)
      if (series.length === 0) problems.push(`NAB: no series in ${NAB_DIR} match BENCH_NAB_GROUPS=${NAB_GROUPS.join(',')}`)
      results.nab = await bench.stage('nab', async () => ({
        rows: score(series, (s) => s.probation),
        tune: score(
          series.filter((s) => s.half === 'tune'),
          (s) => s.probation,
        ),
        heldOut: score(
          series.filter((s) => s.half === 'held-out'),
          (s) => s.probation,
        ),
        curve: curve(series),
      }))
    } else {
      results.nab = {
        skipped: `skipped: ${NAB_DIR} is not on this machine (the labelled NAB series are needed beside the project); NAB figures not measured`,
      }
      say(`NAB ${results.nab.skipped}`)
    }
    say(`synthetic corpus: seed ${cfg.seed}, ${cfg.perGroup} series per group`)
    results.synthetic = await bench.stage('synthetic', async () => score(corpus(cfg.seed, cfg.perGroup), () => SCORE_FROM))

    if (cfg.sweepStats > 0) {
      const db = await bench.createDatabase('metrics-bench-anomalies')
      const now = new Date()
      const newest = newestCompleteHour(now)
      say(`sweep: writing ${cfg.sweepStats} stats x 168 hours`)
      const s0 = performance.now()
      await seedHistory(db, cfg.sweepStats, newest)
      const seedMs = performance.now() - s0
      results.sweep = await bench.stage('sweep', async () => {
        const one = async (when: Date): Promise<SweepTiming> => {
          const x = await timed(() => sweep(db, when, { staleAfterSeconds: 900 }))
          return { ms: x.ms, cpuMs: x.cpuMs, scored: x.value.scored, hours: x.value.hours, deferred: x.value.deferred }
        }
        // First sight: every stat is new to the sweep, and its week is replayed, a budget's worth of stats a sweep.
        const readMs = await timeRead(db, newest)
        const first: SweepTiming[] = []
        do first.push(await one(now))
        while (first[first.length - 1].deferred > 0 && first.length < 100)
        say(`sweep: first sight in ${first.length} sweeps (${first.map((f) => (f.ms / 1000).toFixed(2)).join(', ')} s)`)
        // The steady state: every stat seen, one new hour each per sweep.
        const steady: Array<{ readMs: number; sweep: SweepTiming }> = []
        for (let r = 1; r <= cfg.sweepRuns; r++) {
          const top = newest + r * HOUR
          await writeHour(db, top, top)
          const steadyReadMs = await timeRead(db, top)
          steady.push({ readMs: steadyReadMs, sweep: await one(new Date(now.getTime() + r * HOUR * 1000)) })
          say(`sweep: steady ${r}: ${(steady[steady.length - 1].sweep.ms / 1000).toFixed(2)} s`)
        }
        return { stats: cfg.sweepStats, hours: 168, seedMs, readMs, first, steady }
      })
    }
    check(results)
    return results
  } finally {
    results.finishedAt = new Date().toISOString()
    await bench.close()
  }
}

function check(r: Results): void {
  const p = r.problems
  for (const g of r.synthetic ?? []) {
    const rc = recall(g.detector)
    if (g.group.startsWith('spike 10x') && rc !== null && rc < TARGETS.spikeRecall)
      p.push(`${g.group}: recall ${round(rc, 3)} < ${TARGETS.spikeRecall}`)
    if (g.group.startsWith('clean') && falsePer1000(g.detector) >= TARGETS.cleanFalsePer1000)
      p.push(`${g.group}: ${round(falsePer1000(g.detector), 2)} false flags per 1,000 hours (target < 1)`)
  }
  if (r.nab && 'rows' in r.nab && NAB_HALF === null) {
    // Judged on the held-out half: the constants were set on the other one.
    const d = sum(r.nab.heldOut.map((x) => x.detector))
    const z = sum(r.nab.heldOut.map((x) => x.zscore))
    if ((recall(d) ?? 0) < (recall(z) ?? 0))
      p.push(`NAB held-out: recall ${round(recall(d) ?? 0, 3)} below the z-score's ${round(recall(z) ?? 0, 3)}`)
    if (falsePer1000(d) > falsePer1000(z) * TARGETS.nabFalseShareOfZ)
      p.push(
        `NAB held-out: false flags ${round(falsePer1000(d), 2)}/1,000 h, more than a third of the z-score's ${round(falsePer1000(z), 2)}`,
      )
    const score = nabNormalised(d)
    if (score !== null && score < TARGETS.nabScore) p.push(`NAB held-out: NAB-style score ${round(score, 1)} < ${TARGETS.nabScore}`)
  }
  if (r.sweep) {
    const s = r.sweep
    for (const [k, x] of s.steady.entries())
      if (x.sweep.ms / 1000 >= TARGETS.sweepSeconds)
        p.push(`steady sweep ${k + 1}: ${round(x.sweep.ms / 1000, 2)} s (target < ${TARGETS.sweepSeconds} s)`)
    const longest = Math.max(...s.first.map((f) => f.ms))
    if (longest / 1000 >= TARGETS.sweepSeconds)
      p.push(`a first-sight sweep replaying history took ${round(longest / 1000, 2)} s (target < ${TARGETS.sweepSeconds} s)`)
    const firstScored = s.first.reduce((a, f) => a + f.scored, 0)
    if (firstScored !== s.stats) p.push(`the first-sight sweeps scored ${firstScored} stats, not ${s.stats}`)
    for (const [k, x] of s.steady.entries())
      if (x.sweep.scored !== s.stats || x.sweep.hours !== s.stats)
        p.push(`steady sweep ${k + 1} scored ${x.sweep.scored} stats and ${x.sweep.hours} hours, not ${s.stats} of each`)
  }
}

function sum(ts: Tally[]): Tally {
  return ts.reduce(
    (a, t) => ({
      windows: a.windows + t.windows,
      found: a.found + t.found,
      scored: a.scored + t.scored,
      falseFlags: a.falseFlags + t.falseFlags,
      nab: { raw: a.nab.raw + t.nab.raw, null: a.nab.null + t.nab.null, perfect: a.nab.perfect + t.nab.perfect },
    }),
    emptyTally(),
  )
}

export function qualityTable(rows: GroupRow[]): string[] {
  const f = (x: number | null) => (x === null ? '-' : x.toFixed(2))
  const nab = (t: Tally) => (nabNormalised(t) === null ? '-' : nabNormalised(t)!.toFixed(1))
  const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? '-' : 'inf') : (a / b).toFixed(2))
  const all = {
    group: 'all',
    series: rows.reduce((a, r) => a + r.series, 0),
    detector: sum(rows.map((r) => r.detector)),
    zscore: sum(rows.map((r) => r.zscore)),
  }
  return tableLines(
    [
      [
        'group',
        'series',
        'windows',
        'recall',
        'false/1k h',
        'NAB score',
        'z recall',
        'z false/1k h',
        'z NAB score',
        'recall ratio',
        'false ratio',
      ],
      ...[...rows, all].map((r) => [
        r.group,
        String(r.series),
        String(r.detector.windows),
        f(recall(r.detector)),
        falsePer1000(r.detector).toFixed(2),
        nab(r.detector),
        f(recall(r.zscore)),
        falsePer1000(r.zscore).toFixed(2),
        nab(r.zscore),
        recall(r.detector) === null ? '-' : ratio(recall(r.detector)!, recall(r.zscore)!),
        ratio(falsePer1000(r.detector), falsePer1000(r.zscore)),
      ]),
    ],
    (c) => c >= 1,
  )
}

function curveTable(rows: CurveRow[]): string[] {
  const nab = (t: Tally) => (nabNormalised(t) === null ? '-' : nabNormalised(t)!.toFixed(1))
  // Under BENCH_NAB_HALF=tune there is no held-out half to show.
  const cols = NAB_HALF ? 4 : 7
  return tableLines(
    [
      ['setting', 'recall', 'false/1k h', 'NAB score', 'held-out recall', 'held-out false/1k h', 'held-out NAB score'].slice(0, cols),
      ...rows.map((r) =>
        [
          r.setting,
          (recall(r.all) ?? 0).toFixed(2),
          falsePer1000(r.all).toFixed(2),
          nab(r.all),
          (recall(r.heldOut) ?? 0).toFixed(2),
          falsePer1000(r.heldOut).toFixed(2),
          nab(r.heldOut),
        ].slice(0, cols),
      ),
    ],
    (c) => c >= 1,
  )
}

export function renderAnomaliesReport(r: Results): string {
  const lines = [machineLine('anomalies', r.machine), '']
  lines.push(
    'Quality: labelled windows found (recall) and flagged hours outside any window per 1,000 hours scored; z = plain 3-sigma z-score over the same trailing window, same run. Ratios: detector / z-score.',
  )
  if (r.nab && 'skipped' in r.nab) lines.push(`NAB: ${r.nab.skipped}`)
  else if (r.nab)
    lines.push(
      '',
      `NAB${NAB_GROUPS.length ? ` groups ${NAB_GROUPS.join(', ')} only (BENCH_NAB_GROUPS)` : ''} (hourly means; target: recall >= z-score, false flags <= a third of its):`,
      ...qualityTable(r.nab.rows),
      '',
      'NAB tuning half (the constants were set on these):',
      ...qualityTable(r.nab.tune),
      '',
      ...(NAB_HALF
        ? ['NAB held-out half: not scored (BENCH_NAB_HALF=tune)']
        : ['NAB held-out half (the targets are judged here; NAB-style score >= 65 as well):', ...qualityTable(r.nab.heldOut)]),
      '',
      `Sensitivity curve (${NAB_HALF ? 'the tuning half' : 'all four groups, then the held-out half'}): the detector's curve should lie above the z-score's`,
      ...curveTable(r.nab.curve),
    )
  if (r.synthetic) {
    lines.push(
      '',
      `Synthetic corpus, seed ${r.config.seed} (constants tuned on seed ${TUNING_SEED} only); targets: spike 10x recall >= 0.9, clean groups < 1 false flag per 1,000 hours:`,
      ...qualityTable(r.synthetic),
    )
  }
  if (r.sweep) {
    const s = r.sweep
    const sec = (ms: number) => (ms / 1000).toFixed(2)
    const firstMs = s.first.reduce((a, f) => a + f.ms, 0)
    const firstCpu = s.first.reduce((a, f) => a + f.cpuMs, 0)
    const firstHours = s.first.reduce((a, f) => a + f.hours, 0)
    const row = (phase: string, f: SweepTiming, readMs: number | null) => [
      phase,
      sec(f.ms),
      sec(f.cpuMs),
      String(f.scored),
      String(f.hours),
      String(f.deferred),
      readMs === null ? '' : sec(readMs),
      readMs === null ? '' : (f.ms / readMs).toFixed(2),
    ]
    lines.push(
      '',
      `Sweep: ${s.stats} stats x ${s.hours} hours of hourly history, seeded in ${sec(s.seedMs)} s (target: each sweep under ${TARGETS.sweepSeconds} s)`,
      ...tableLines(
        [
          [
            'sweep',
            'seconds',
            'CPU s (this process)',
            'stats scored',
            'hours stepped',
            'replays left',
            'reading the history alone (s)',
            'sweep / read',
          ],
          ...s.first.map((f, i) => row(`first sight ${i + 1}/${s.first.length} (history replayed)`, f, i ? null : s.readMs)),
          [
            'first sight, all sweeps',
            sec(firstMs),
            sec(firstCpu),
            String(s.first.reduce((a, f) => a + f.scored, 0)),
            String(firstHours),
            '',
            sec(s.readMs),
            (firstMs / s.readMs).toFixed(2),
          ],
          ...s.steady.map((x, i) => row(`steady ${i + 1} (one new hour per stat)`, x.sweep, x.readMs)),
        ],
        (c) => c >= 1,
      ),
      `First sight: ${(firstCpu / Math.max(1, s.stats)).toFixed(2)} ms of this process' CPU per stat (its week replayed).`,
    )
  }
  lines.push(...busyLines(r.othersCpuPct), ...closingLines(r.problems, 'All targets met.'))
  return lines.join('\n')
}

if (isMain(import.meta.url)) await runStandalone('anomalies-bench', 'anomalies bench', () => runAnomaliesBench(), renderAnomaliesReport)
