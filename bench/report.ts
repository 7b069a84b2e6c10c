// The bench's results: one JSON document, and the table printed from it.
import type { StatsdPhase } from './statsd-load.js'
import { closingLines, isFailed, tableLines, type Failed } from './common.js'
import type { CopyResult } from './copy-ref.js'
import type { InfluxPhase } from './influx-ref.js'
import type { CpuUsage } from './machine.js'
import type { LoadResult } from './load.js'
import type { ProbeResult } from './probe.js'
import type { DbActivity, DrainResult } from './setup.js'

/** Two ways of sending the same points, CPU per point end to end: `reference` before and after, `subject` between. */
export interface PairResult {
  label: string
  reference: string
  subject: string
  before: PhaseResult | Failed
  measured: PhaseResult | Failed
  after: PhaseResult | Failed
  /** subject / mean of the reference's two runs, per tier and in all. */
  ratio?: { web: number; worker: number; postgres: number; total: number }
  target: number
}

export const TARGETS = {
  singleVsInflux: 1.0,
  singleVsKoa: 0.7,
  batchVsCopy: 0.5,
  visibleP99Ms: 1000,
  linesVsInflux: 1.0,
  statsdDroppedPct: 0.1,
  /** CPU of the web processes per single write against bare Koa's per request (docs/decisions.md §27). */
  webCpuPerWriteVsKoa: 1.5,
  /** A tagged point (3 tags) against an untagged one, and an OTLP point against the same point in a v1 batch, end to end. */
  taggedVsUntagged: 1.2,
  otlpVsV1: 1.2,
} as const

export { isFailed, type Failed } from './common.js'

export interface PhaseResult {
  load: LoadResult
  drain: DrainResult
  pointsPerRequest: number
  acceptedPointsPerSec: number
  storedPointsPerSec: number
  /** Accepted points missing from the table after the drain (negative: more rows than accepted answers). */
  lost: number
  /** PostgreSQL activity in the bench database from the start of the stage (warmup included) to the end of the drain. */
  db: DbActivity
  /**
   * The web processes' PostgreSQL round trips and Redis commands per answered request, from the end of the warm-up,
   * and the share of the requests the direct route of legacy single writes answered (api/direct-writes.ts).
   */
  io?: { pgPerRequest: number; redisPerRequest: number; directShare?: number }
  /** Persist jobs applied during the phase (warm-up and drain included) and their points. */
  jobs?: { jobs: number; points: number }
  /** The web processes' CPU per answered request over the measured window (µs): no warm-up, no drain. */
  webCpuUsPerRequest?: number
  /** CPU per point end to end, from the end of the warm-up to the drain and the rollup pass after it. */
  perPoint?: PerPointCpu
}

/**
 * CPU per point by tier (µs): the web processes' over the measured window divided by the points they accepted;
 * the worker's and PostgreSQL's (the backends of the service's own connections to the bench database, not the
 * server's other databases) from the end of the warm-up until the points were stored and a rollup pass folded
 * them, divided by the points stored meanwhile.
 */
export interface PerPointCpu {
  web: number
  worker: number
  postgres: number
  total: number
  /** Points the web processes accepted, and points stored, in the window. */
  accepted: number
  stored: number
}

export interface Results {
  startedAt: string
  finishedAt?: string
  machine: {
    cpus: number
    node: string
    loadavgAtStart: number[]
    cpuByStage: Record<string, CpuUsage>
    quietBeforeStage?: Record<string, { waitedMs: number; othersPct: number; quiet: boolean }>
  }
  config: {
    benchSeconds: number
    connections: number
    loadAccounts: number
    webProcesses: number
    workerProcesses: number
    statsPerPhase: number
    batchSize: number
    v1BatchSize?: number
    lineProtocolLines?: number
    statsdRate?: number
    copyConnections: number
    serviceFrom?: string
  }
  rateLimit: { perAccountRequestsPerSec: number; burst: number; accounts: number; capRequestsPerSec: number; note?: string }
  /** The bar of phase 1, measured before it and again after it (the ratio uses the mean). */
  referenceA?: LoadResult | Failed
  referenceAAfter?: LoadResult | Failed
  /** The bar of phase 2: one COPY statement per 100-row batch, before phase 2 and again after it. */
  referenceB?: CopyResult | Failed
  referenceBAfter?: CopyResult | Failed
  /** Context only: one COPY per connection streaming for the whole duration. */
  referenceBStreaming?: CopyResult | Failed
  /** The peer reference: InfluxDB 1.x under the same load, 1 and 100 points per request. */
  influxSingle?: InfluxPhase | Failed
  influxBatch?: InfluxPhase | Failed
  /** InfluxDB taking 5,000-line requests: the bar of phase L. */
  influxLines?: InfluxPhase | Failed
  service?: { ready: boolean; error?: string; warnings?: number; logTail?: string[] }
  phase1?: PhaseResult | Failed
  phase2?: PhaseResult | Failed
  /** Phase 1's and phase 2's load with the worker paused for the measured window: the front end alone. */
  phaseF1?: PhaseResult | Failed
  phaseF2?: PhaseResult | Failed
  /** 1,000-point batches on /api/v1/points, inside the COPY reference's bracket. */
  phaseV?: PhaseResult | Failed
  /** 5,000-line InfluxDB line-protocol requests on /api/v2/write. */
  phaseL?: PhaseResult | Failed
  /** StatsD counters over UDP at a fixed rate. */
  phaseS?: StatsdPhase | Failed
  /**
   * Tagged against untagged points (phase T), OTLP against /api/v1/points batches of the same points (phase O): each
   * side's reference runs before it and again after it, so that the pair sees the same machine.
   */
  pairs?: Record<string, PairResult>
  phase3?: { load: LoadResult; probe: ProbeResult } | Failed
  ratios: {
    singleAcceptedVsKoa?: number
    singleStoredVsKoa?: number
    batchAcceptedVsCopy?: number
    batchStoredVsCopy?: number
    singleStoredVsInflux?: number
    batchStoredVsInflux?: number
    v1BatchAcceptedVsCopy?: number
    v1BatchStoredVsCopy?: number
    linesStoredVsInflux?: number
    frontSingleAcceptedVsInflux?: number
    frontSingleAcceptedVsKoa?: number
    frontBatchAcceptedVsInflux?: number
  }
  /** What looked wrong in the service's behaviour. */
  problems: string[]
  /** What disturbed the measurement (other work on the machine). */
  disturbances: string[]
}

const n = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : Math.round(x).toLocaleString('en-US'))
const ms = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x < 10 ? x.toFixed(1) : Math.round(x).toString())
const ratio = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : `${x.toFixed(2)}x`)
const verdict = (ok: boolean | undefined) => (ok === undefined ? '' : ok ? 'met' : 'NOT MET')

/** The mean of a reference measured before and after its phase (either alone when the other failed). */
export function meanOf<T>(before: T | Failed | undefined, after: T | Failed | undefined, f: (x: T) => number): number | undefined {
  const xs = [before, after]
    .filter((x): x is T => !!x && !isFailed(x))
    .map(f)
    .filter((x) => x > 0)
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : undefined
}

export function renderTable(r: Results): string {
  const rows: string[][] = [['figure', 'service', 'reference', 'ratio', 'target', '']]
  const A = isFailed(r.referenceA) ? undefined : r.referenceA
  const p1 = isFailed(r.phase1) ? undefined : r.phase1
  const p2 = isFailed(r.phase2) ? undefined : r.phase2
  const p3 = isFailed(r.phase3) ? undefined : r.phase3
  const both = <T>(before: T | Failed | undefined, after: T | Failed | undefined, f: (x: T) => number, unit: string, per: string) => {
    const mean = meanOf(before, after, f)
    if (mean === undefined) return `${unit}: failed`
    const a = isFailed(before) || !before ? undefined : f(before)
    const b = isFailed(after) || !after ? undefined : f(after)
    return `${unit} ${n(mean)} ${per}${a !== undefined && b !== undefined ? ` (${n(a)} / ${n(b)})` : ''}`
  }
  const koa = both(r.referenceA, r.referenceAAfter, (x) => x.requestsPerSec, 'Koa', 'req/s')
  const copy = both(r.referenceB, r.referenceBAfter, (x) => x.rowsPerSec, 'COPY', 'rows/s')
  const S = isFailed(r.referenceBStreaming) ? undefined : r.referenceBStreaming
  const { singleAcceptedVsKoa: sa, singleStoredVsKoa: ss, batchAcceptedVsCopy: ba, batchStoredVsCopy: bs } = r.ratios
  const ge = (x: number | undefined, t: number) => (x === undefined ? undefined : x >= t)

  rows.push([
    'single /ez accepted req/s',
    p1 ? n(p1.load.acceptedPerSec) : 'failed',
    koa,
    ratio(sa),
    `>= ${TARGETS.singleVsKoa}x Koa`,
    verdict(ge(sa, TARGETS.singleVsKoa)),
  ])
  const I1 = isFailed(r.influxSingle) ? undefined : r.influxSingle
  const I2 = isFailed(r.influxBatch) ? undefined : r.influxBatch
  const { singleStoredVsInflux: si, batchStoredVsInflux: bi } = r.ratios
  rows.push([
    'single /ez stored points/s',
    p1 ? n(p1.storedPointsPerSec) : 'failed',
    I1 ? `InfluxDB ${n(I1.storedPointsPerSec)} points/s` : 'InfluxDB: not run',
    ratio(si),
    `>= ${TARGETS.singleVsInflux}x InfluxDB`,
    verdict(ge(si, TARGETS.singleVsInflux)),
  ])
  rows.push([
    'single /ez stored points/s',
    p1 ? n(p1.storedPointsPerSec) : 'failed',
    koa,
    ratio(ss),
    `>= ${TARGETS.singleVsKoa}x Koa`,
    verdict(ge(ss, TARGETS.singleVsKoa)),
  ])
  // Both sides over their measured windows only, summed over their processes: what one request costs.
  const koaCpu = meanOf(r.referenceA, r.referenceAAfter, (x) => x.cpuUsPerRequest ?? 0)
  const webCpu = p1?.webCpuUsPerRequest
  rows.push([
    'single /ez web CPU µs per write',
    webCpu === undefined ? '-' : n(webCpu),
    koaCpu === undefined ? 'Koa: not measured' : `Koa ${n(koaCpu)} µs per request`,
    webCpu !== undefined && koaCpu ? ratio(webCpu / koaCpu) : '-',
    `<= ${TARGETS.webCpuPerWriteVsKoa}x Koa`,
    webCpu === undefined || !koaCpu ? '' : verdict(webCpu / koaCpu <= TARGETS.webCpuPerWriteVsKoa),
  ])
  // A control: the load generator does the same work for every single write whoever answers, yet in phase 1 it
  // spends more CPU per request than against bare Koa (a lower rate batches less per wake-up; two cores shared
  // with the worker, PostgreSQL and Redis). Divided out, what is left is the web path's own cost against Koa's.
  const genUs = (l: LoadResult) => (l.completed + l.warmupCompleted > 0 ? (l.cpuMs * 1000) / (l.completed + l.warmupCompleted) : 0)
  const genKoa = meanOf(r.referenceA, r.referenceAAfter, genUs)
  const genP1 = p1 ? genUs(p1.load) : 0
  if (webCpu !== undefined && koaCpu && genKoa && genP1)
    rows.push([
      "  the same over the load generator's change",
      ratio(genP1 / genKoa),
      `load generator ${n(genP1)} µs per request against ${n(genKoa)} beside Koa`,
      ratio(webCpu / koaCpu / (genP1 / genKoa)),
      '(context)',
      '',
    ])
  const f1Cpu = isFailed(r.phaseF1) ? undefined : r.phaseF1?.webCpuUsPerRequest
  if (f1Cpu !== undefined)
    rows.push([
      '  the same, worker paused (phase F1)',
      n(f1Cpu),
      koaCpu === undefined ? '' : `Koa ${n(koaCpu)} µs per request`,
      koaCpu ? ratio(f1Cpu / koaCpu) : '-',
      '(context)',
      '',
    ])
  rows.push([
    'single /ez latency p50 / p99 ms',
    p1 ? `${ms(p1.load.latencyMs.p50)} / ${ms(p1.load.latencyMs.p99)}` : 'failed',
    A ? `Koa ${ms(A.latencyMs.p50)} / ${ms(A.latencyMs.p99)}` : '-',
    '',
    '',
    '',
  ])
  rows.push([
    'batch (100) accepted points/s',
    p2 ? n(p2.acceptedPointsPerSec) : 'failed',
    copy,
    ratio(ba),
    `>= ${TARGETS.batchVsCopy}x COPY`,
    verdict(ge(ba, TARGETS.batchVsCopy)),
  ])
  rows.push([
    'batch (100) stored points/s',
    p2 ? n(p2.storedPointsPerSec) : 'failed',
    copy,
    ratio(bs),
    `>= ${TARGETS.batchVsCopy}x COPY`,
    verdict(ge(bs, TARGETS.batchVsCopy)),
  ])
  rows.push([
    'batch (100) stored points/s',
    p2 ? n(p2.storedPointsPerSec) : 'failed',
    I2 ? `InfluxDB ${n(I2.storedPointsPerSec)} points/s` : 'InfluxDB: not run',
    ratio(bi),
    '(context)',
    '',
  ])
  rows.push([
    'batch request latency p50 / p99 ms',
    p2 ? `${ms(p2.load.latencyMs.p50)} / ${ms(p2.load.latencyMs.p99)}` : 'failed',
    '',
    '',
    '',
    '',
  ])
  // The ceiling of phases 1 and 2: the same load answered while nothing is stored (the worker paused).
  const front = (label: string, x: PhaseResult | Failed | undefined, ref: string, q: number | undefined) => {
    if (!x || (isFailed(x) && x.error.startsWith('skipped'))) return
    rows.push([label, isFailed(x) ? 'failed' : n(x.acceptedPointsPerSec), ref, ratio(q), '(ceiling)', ''])
  }
  front(
    'front end alone, single accepted points/s',
    r.phaseF1,
    I1 ? `InfluxDB ${n(I1.storedPointsPerSec)} points/s` : 'InfluxDB: not run',
    r.ratios.frontSingleAcceptedVsInflux,
  )
  front('front end alone, single accepted points/s', r.phaseF1, koa, r.ratios.frontSingleAcceptedVsKoa)
  front(
    'front end alone, batch (100) accepted points/s',
    r.phaseF2,
    I2 ? `InfluxDB ${n(I2.storedPointsPerSec)} points/s` : 'InfluxDB: not run',
    r.ratios.frontBatchAcceptedVsInflux,
  )
  const pv = isFailed(r.phaseV) ? undefined : r.phaseV
  if (r.phaseV && !(isFailed(r.phaseV) && r.phaseV.error.startsWith('skipped'))) {
    const { v1BatchAcceptedVsCopy: va, v1BatchStoredVsCopy: vs } = r.ratios
    rows.push([
      'v1 batch (1000) accepted points/s',
      pv ? n(pv.acceptedPointsPerSec) : 'failed',
      copy,
      ratio(va),
      `>= ${TARGETS.batchVsCopy}x COPY`,
      verdict(ge(va, TARGETS.batchVsCopy)),
    ])
    rows.push([
      'v1 batch (1000) stored points/s',
      pv ? n(pv.storedPointsPerSec) : 'failed',
      copy,
      ratio(vs),
      `>= ${TARGETS.batchVsCopy}x COPY`,
      verdict(ge(vs, TARGETS.batchVsCopy)),
    ])
    rows.push([
      'v1 batch request latency p50 / p99 ms',
      pv ? `${ms(pv.load.latencyMs.p50)} / ${ms(pv.load.latencyMs.p99)}` : 'failed',
      '',
      '',
      '',
      '',
    ])
  }
  const pl = isFailed(r.phaseL) ? undefined : r.phaseL
  if (r.phaseL && !(isFailed(r.phaseL) && r.phaseL.error.startsWith('skipped'))) {
    const IL = isFailed(r.influxLines) ? undefined : r.influxLines
    const li = r.ratios.linesStoredVsInflux
    rows.push([
      'line protocol (5000) stored points/s',
      pl ? n(pl.storedPointsPerSec) : 'failed',
      IL ? `InfluxDB ${n(IL.storedPointsPerSec)} points/s` : 'InfluxDB: not run',
      ratio(li),
      `>= ${TARGETS.linesVsInflux}x InfluxDB`,
      verdict(ge(li, TARGETS.linesVsInflux)),
    ])
    rows.push([
      'line protocol request latency p50 / p99 ms',
      pl ? `${ms(pl.load.latencyMs.p50)} / ${ms(pl.load.latencyMs.p99)}` : 'failed',
      IL ? `InfluxDB ${ms(IL.load.latencyMs.p50)} / ${ms(IL.load.latencyMs.p99)}` : '',
      '',
      '',
      '',
    ])
  }
  const ps = isFailed(r.phaseS) ? undefined : r.phaseS
  if (r.phaseS && !(isFailed(r.phaseS) && r.phaseS.error.startsWith('skipped'))) {
    rows.push([
      `StatsD UDP dropped share at ${n(ps?.ratePerSec)}/s`,
      ps ? `${ps.droppedPct}% (${n(ps.sent - ps.stored)} of ${n(ps.sent)})` : 'failed',
      ps ? `refused ${n(ps.refused)}, kernel drops ${n(ps.kernelDrops)}` : '',
      '',
      `< ${TARGETS.statsdDroppedPct}%`,
      ps ? verdict(ps.droppedPct < TARGETS.statsdDroppedPct) : '',
    ])
  }
  const vis = p3?.probe
  rows.push([
    'write -> visible p50 / p99 ms',
    vis ? `${ms(vis.delaysMs.p50)} / ${ms(vis.delaysMs.p99)}` : 'failed',
    vis ? `${vis.visible}/${vis.launched} probes seen` : '',
    '',
    `p99 <= ${TARGETS.visibleP99Ms} ms`,
    vis ? verdict(vis.visible > 0 && vis.neverVisible === 0 && vis.writeFailed === 0 && vis.delaysMs.p99 <= TARGETS.visibleP99Ms) : '',
  ])
  if (p3) rows.push(['  load during probes, accepted req/s', n(p3.load.acceptedPerSec), '', '', '', ''])
  if (S)
    rows.push([
      'context: streaming COPY rows/s',
      '',
      `COPY ${n(S.rowsPerSec)} rows/s`,
      p2 ? ratio(p2.storedPointsPerSec / S.rowsPerSec) : '-',
      '(no target)',
      '',
    ])

  for (const pair of Object.values(r.pairs ?? {})) {
    const m = isFailed(pair.measured) ? undefined : pair.measured.perPoint
    const refs = [pair.before, pair.after].flatMap((x) => (isFailed(x) || !x.perPoint ? [] : [x.perPoint]))
    const refTotal = refs.length ? refs.reduce((a, x) => a + x.total, 0) / refs.length : undefined
    rows.push([
      `${pair.label}: CPU µs per point`,
      m ? `${m.total.toFixed(1)} (web ${m.web.toFixed(1)}, worker ${m.worker.toFixed(1)}, pg ${m.postgres.toFixed(1)})` : 'failed',
      refTotal === undefined
        ? `${pair.reference}: failed`
        : `${pair.reference} ${refTotal.toFixed(1)} (${refs.map((x) => x.total.toFixed(1)).join(' / ')})`,
      ratio(pair.ratio?.total),
      `<= ${pair.target}x`,
      pair.ratio ? verdict(pair.ratio.total <= pair.target) : '',
    ])
    if (pair.ratio)
      rows.push([
        '  by tier: web / worker / PostgreSQL',
        '',
        '',
        `${ratio(pair.ratio.web)} / ${ratio(pair.ratio.worker)} / ${ratio(pair.ratio.postgres)}`,
        '',
        '',
      ])
  }

  return tableLines(rows, (c) => !(c === 0 || c === 2 || c === 4)).join('\n')
}

export function renderReport(r: Results): string {
  const c = r.config
  const lines: string[] = []
  lines.push('')
  lines.push(
    `metrics-service bench: ${r.machine.cpus} CPUs, node ${r.machine.node}, BENCH_SECONDS=${c.benchSeconds}, ${c.connections} connections,`,
  )
  lines.push(
    `  ${c.webProcesses} web + ${c.workerProcesses} worker process(es)${c.serviceFrom ? ` from ${c.serviceFrom}` : ''} (Koa reference: ${c.webProcesses} process(es), run while the service idles), ${c.loadAccounts} business accounts,`,
  )
  lines.push(
    `  COPY reference: one ${c.batchSize}-row COPY statement per batch over ${c.copyConnections} connections (the bar); streaming COPY shown for context`,
  )
  lines.push('  each reference is measured before its phase and again after it, "mean (before / after)"; ratios use the mean')
  lines.push(
    `  load average at start ${r.machine.loadavgAtStart.join(' ')}${r.machine.loadavgAtStart[0] > 0.5 * r.machine.cpus ? ' (something else was busy on this machine: figures are less reliable)' : ''}`,
  )
  lines.push('')
  lines.push(renderTable(r))
  lines.push('')
  lines.push(
    'Note: absolute figures on this shared machine swing by about a quarter from run to run; the ratios to the references measured in the same run are what count.',
  )
  lines.push(
    `Rate limit: ${r.rateLimit.accounts} accounts x ${n(r.rateLimit.perAccountRequestsPerSec)} req/s (burst ${n(r.rateLimit.burst)}) = cap ${n(r.rateLimit.capRequestsPerSec)} req/s.${r.rateLimit.note ? ` ${r.rateLimit.note}` : ''}`,
  )
  const p1 = isFailed(r.phase1) ? undefined : r.phase1
  const p2 = isFailed(r.phase2) ? undefined : r.phase2
  const pv = isFailed(r.phaseV) ? undefined : r.phaseV
  const pl = isFailed(r.phaseL) ? undefined : r.phaseL
  const ps = isFailed(r.phaseS) ? undefined : r.phaseS
  if (ps)
    lines.push(
      `phase S: ${n(ps.sent)} StatsD counters sent over UDP in ${(ps.durationMs / 1000).toFixed(0)} s (${n(ps.ratePerSec)}/s), ${n(ps.stored)} stored (${ps.droppedPct}% dropped; refused by the service ${n(ps.refused)}, dropped by the kernel's receive buffer ${n(ps.kernelDrops)}); the last stored ${ps.drainSeconds} s after the last sent`,
    )
  const f1 = isFailed(r.phaseF1) ? undefined : r.phaseF1
  const f2 = isFailed(r.phaseF2) ? undefined : r.phaseF2
  for (const [name, p] of [
    ['phase 1 (single)', p1],
    ['phase F1 (single, worker paused)', f1],
    ['phase 2 (batch)', p2],
    ['phase F2 (batch, worker paused)', f2],
    ['phase V (v1 batch)', pv],
    ['phase L (line protocol)', pl],
  ] as const) {
    if (!p) continue
    const reqs = p.load.completed + p.load.warmupCompleted || 1
    const busiest = Object.entries(p.db.tables)
      .map(([t, a]) => [t, a.seqScan + a.idxScan + a.ins + a.upd + a.del] as const)
      .sort((x, y) => y[1] - x[1])
      .slice(0, 4)
      .map(([t, ops]) => `${t} ${(ops / reqs).toFixed(2)}`)
      .join(', ')
    if (p.io)
      lines.push(
        `${name}: per answered request, the web processes sent ${p.io.pgPerRequest.toFixed(3)} PostgreSQL round trips and ${p.io.redisPerRequest.toFixed(3)} Redis commands (steady state: from the end of the warm-up; the group-committed job add is shared by the requests of its group)${p.io.directShare !== undefined && (p.io.directShare > 0 || p.pointsPerRequest === 1) ? `; the direct route answered ${(p.io.directShare * 100).toFixed(1)} % of them` : ''}`,
      )
    if (p.jobs?.jobs)
      lines.push(`${name}: ${n(p.jobs.jobs)} persist jobs, ${(p.jobs.points / p.jobs.jobs).toFixed(1)} points per job (warm-up included)`)
    lines.push(
      `${name}: PostgreSQL ${(p.db.xactCommit / reqs).toFixed(2)} transactions per answered request (warmup included); table operations per request: ${busiest}`,
    )
    lines.push(
      `${name}: ${n(p.load.completed)} answers (${n(p.load.accepted)} accepted) in ${(p.load.windowMs / 1000).toFixed(1)} s; ${n(p.drain.rows)} of ${n(p.drain.expected)} accepted points stored, last seen ${((p.drain.lastStoredAt - p.load.lastResponseAt) / 1000).toFixed(2)} s after the last answer${p.drain.complete ? '' : ' (drain INCOMPLETE)'}`,
    )
  }
  const stages = Object.entries(r.machine.cpuByStage)
  if (stages.length) {
    lines.push(
      `CPU during each stage (share of all cores, 100% = all busy; "others" = live processes that are neither this bench nor PostgreSQL/Redis;`,
    )
    lines.push(`  "unattributed" = busy time of processes that exited meanwhile (another session's tests, say) and of the kernel):`)
    for (const [stage, u] of stages) {
      const top = u.top.map((t) => `${t.comm}[${t.pid}] ${t.pct}%`).join(', ')
      const mine = Object.entries(u.ours)
        .sort((x, y) => y[1] - x[1])
        .map(([k, v]) => `${k} ${v}%`)
        .join(', ')
      lines.push(
        `  ${stage.padEnd(12)} busy ${String(u.machineBusyPct).padStart(3)}%: ${mine}; others ${u.othersPct}%${top ? ` (${top})` : ''}; unattributed ${u.unattributedPct}%`,
      )
    }
  }
  const perUnit = perUnitCpu(r)
  if (perUnit.length) {
    lines.push(
      'CPU time per unit of work, by process (stage CPU, warmup and drain included, divided by the requests or points of the stage):',
    )
    lines.push(...perUnit.map((l) => `  ${l}`))
  }
  for (const [name, x] of [
    ['InfluxDB single', r.influxSingle],
    ['InfluxDB batch', r.influxBatch],
    ['InfluxDB lines', r.influxLines],
  ] as const) {
    if (!x) continue
    if (isFailed(x))
      lines.push(`${name}: ${x.error.startsWith('skipped') ? x.error.toUpperCase().slice(0, 7) + x.error.slice(7) : `FAILED: ${x.error}`}`)
    else
      lines.push(
        `${name}: ${n(x.load.completed)} answers (${n(x.load.accepted)} accepted, 204) in ${(x.load.windowMs / 1000).toFixed(1)} s; ${n(x.stored)} points stored of ${n(x.load.accepted * x.pointsPerRequest)}; latency p50 / p99 ${ms(x.load.latencyMs.p50)} / ${ms(x.load.latencyMs.p99)} ms`,
      )
  }
  if (r.service?.error) lines.push(`service: ${r.service.error}`)
  for (const [name, x] of [
    ['reference A', r.referenceA],
    ['reference B', r.referenceB],
    ['reference B streaming', r.referenceBStreaming],
    ['phase 1', r.phase1],
    ['phase F1', r.phaseF1],
    ['phase 2', r.phase2],
    ['phase F2', r.phaseF2],
    ['phase V', r.phaseV],
    ['phase L', r.phaseL],
    ['phase S', r.phaseS],
    ['phase 3', r.phase3],
    ...Object.values(r.pairs ?? {}).flatMap((p) => [
      [`${p.label} (${p.reference}, before)`, p.before] as const,
      [`${p.label} (${p.subject})`, p.measured] as const,
      [`${p.label} (${p.reference}, after)`, p.after] as const,
    ]),
  ] as const) {
    if (isFailed(x)) lines.push(x.error.startsWith('skipped') ? `${name}: ${x.error}` : `${name} FAILED: ${x.error}`)
  }
  if (r.disturbances.length) {
    lines.push('')
    lines.push('Disturbed measurements:')
    for (const p of r.disturbances) lines.push(`  - ${p}`)
  }
  lines.push(
    ...closingLines(
      r.problems,
      p1 || p2 ? 'Nothing looked wrong: every answer accepted, every accepted point stored, no warnings logged.' : undefined,
    ),
  )
  return lines.join('\n')
}

/** Where the machine's time went for each request (reference A) or point (phases 1 and 2): the figure to compare across runs on a noisy machine. */
function perUnitCpu(r: Results): string[] {
  const out: string[] = []
  const line = (label: string, stage: string, units: number, unit: string) => {
    const u = r.machine.cpuByStage[stage]
    if (!u || units <= 0) return
    const us = (pct: number) => Math.round(((pct / 100) * r.machine.cpus * u.elapsedMs * 1000) / units)
    const parts = Object.entries(u.ours)
      .filter(([, v]) => v > 0)
      .sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k} ${us(v)}`)
    const total = Object.values(u.ours).reduce((s, v) => s + v, 0)
    out.push(`${label.padEnd(12)} ${String(us(total)).padStart(5)} µs per ${unit} (${parts.join(', ')})`)
  }
  if (!isFailed(r.referenceA) && r.referenceA)
    line('reference A', 'reference A', r.referenceA.completed + r.referenceA.warmupCompleted, 'request')
  if (!isFailed(r.influxSingle) && r.influxSingle)
    line('influx 1', 'influx single', r.influxSingle.load.accepted + r.influxSingle.load.warmupCompleted, 'point')
  if (!isFailed(r.influxBatch) && r.influxBatch)
    line(
      'influx 100',
      'influx batch',
      (r.influxBatch.load.accepted + r.influxBatch.load.warmupCompleted) * r.influxBatch.pointsPerRequest,
      'point',
    )
  if (!isFailed(r.phase1) && r.phase1) line('phase 1', 'phase 1', r.phase1.load.accepted + r.phase1.load.warmupCompleted, 'point')
  if (!isFailed(r.phaseF1) && r.phaseF1) line('phase F1', 'phase F1', r.phaseF1.load.accepted + r.phaseF1.load.warmupCompleted, 'point')
  if (!isFailed(r.phase2) && r.phase2)
    line('phase 2', 'phase 2', (r.phase2.load.accepted + r.phase2.load.warmupCompleted) * r.phase2.pointsPerRequest, 'point')
  if (!isFailed(r.phaseF2) && r.phaseF2)
    line('phase F2', 'phase F2', (r.phaseF2.load.accepted + r.phaseF2.load.warmupCompleted) * r.phaseF2.pointsPerRequest, 'point')
  if (!isFailed(r.phaseV) && r.phaseV)
    line('phase V', 'phase V', (r.phaseV.load.accepted + r.phaseV.load.warmupCompleted) * r.phaseV.pointsPerRequest, 'point')
  if (!isFailed(r.influxLines) && r.influxLines)
    line(
      'influx 5000',
      'influx lines',
      (r.influxLines.load.accepted + r.influxLines.load.warmupCompleted) * r.influxLines.pointsPerRequest,
      'point',
    )
  if (!isFailed(r.phaseL) && r.phaseL)
    line('phase L', 'phase L', (r.phaseL.load.accepted + r.phaseL.load.warmupCompleted) * r.phaseL.pointsPerRequest, 'point')
  return out
}
