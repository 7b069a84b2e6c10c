// Import benchmark (docs/decisions.md §D-T: import). Not a test:
// it prints figures, the references measured in the same run, and the targets.
//
//   File: a wide CSV (Time,<stat>...) of BENCH_IMPORT_POINTS points (500,000:
//   the per-file limit), BENCH_IMPORT_STATS columns (50), one row a minute
//   over the last days, values with three decimals (about 4 MB; 500,000
//   points fit in 8 MB only as wide CSV: JSON and long CSV need 15+ bytes a point).
//   1. Preview: POST /api/v1/import/legacy?dryRun=1 through a real API
//      (in this process, on a real port), BENCH_IMPORT_PREVIEWS times (3).
//      Reference: csv-parse reading the same text with nothing else done
//      (the floor of any import that uses it). Target: under 3 s.
//   2. Import: POST (202), then GET /api/v1/import/legacy/:id every 50 ms until
//      `completed`; workers run in this process. Checked: every point stored.
//      Reference: one streaming PostgreSQL COPY of the same rows into an
//      unindexed table (PostgreSQL's floor for writing them). Target: under 15 s.
//   3. Memory: this process's RSS and V8 heap, sampled every 10 ms during each
//      stage, peak above the level before it (API, workers and client share the process).
//
// Own database (metrics_bench_import, dropped at the end) and Redis prefix
// (deleted at the end) on the local PostgreSQL and Redis.
//
// Env: BENCH_IMPORT_POINTS (500000), BENCH_IMPORT_STATS (50), BENCH_IMPORT_PREVIEWS (3),
// DATABASE_URL (server only; postgres://localhost), REDIS_URL (redis://127.0.0.1:6379).
import { once } from 'node:events'
import { parse as parseCsv } from 'csv-parse/sync'
import { startApi } from '../api/server.js'
import { loadConfig } from '../shared/config.js'
import { createLogger } from '../shared/log.js'
import { startWorkers } from '../workers/main.js'
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
import { createAccount } from './setup.js'
import { percentile, round } from './stats.js'

export const IMPORT_DB_NAME = 'metrics_bench_import'
export const IMPORT_TARGETS = { previewMs: 3_000, importMs: 15_000 } as const

interface Options {
  points: number
  stats: number
  previews: number
}

interface Peak {
  rssMb: number
  heapMb: number
}

export interface ImportBenchResults extends BenchResultsBase<Options> {
  fileBytes?: number
  parseRefMs?: number
  previewMs?: number[]
  previewPeak?: Peak
  copyRefMs?: number
  importMs?: number
  /** POST to 202 (read, analyse, take quota, store the accepted points, queue the job). */
  acceptMs?: number
  importPeak?: Peak
  stored?: number
}

function optionsFromEnv(): Options {
  return {
    points: envInt('BENCH_IMPORT_POINTS', 500_000, 1),
    stats: envInt('BENCH_IMPORT_STATS', 50, 1),
    previews: envInt('BENCH_IMPORT_PREVIEWS', 3, 1),
  }
}

function wideCsv(points: number, stats: number): string {
  const rows = Math.ceil(points / stats)
  const start = Math.floor(Date.now() / 1000) - rows * 60 - 3600
  const lines = [`Time,${Array.from({ length: stats }, (_, i) => `bench stat ${i}`).join(',')}`]
  let left = points
  for (let r = 0; r < rows; r++) {
    const cells: string[] = []
    for (let c = 0; c < stats && left > 0; c++, left--) cells.push((Math.random() * 1000).toFixed(3))
    lines.push(`${start + r * 60},${cells.join(',')}`)
  }
  return `${lines.join('\n')}\n`
}

/** Runs `fn` while sampling memory; returns its result, its duration and the peak above the level before it. */
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; peak: Peak }> {
  const before = process.memoryUsage()
  let rss = before.rss
  let heap = before.heapUsed
  const timer = setInterval(() => {
    const m = process.memoryUsage()
    rss = Math.max(rss, m.rss)
    heap = Math.max(heap, m.heapUsed)
  }, 10)
  const started = performance.now()
  try {
    const value = await fn()
    return {
      value,
      ms: performance.now() - started,
      peak: { rssMb: round((rss - before.rss) / 2 ** 20, 1), heapMb: round((heap - before.heapUsed) / 2 ** 20, 1) },
    }
  } finally {
    clearInterval(timer)
  }
}

async function post(url: string, key: string, query: string, body: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/api/v1/import/legacy${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
    body,
  })
  return { status: res.status, body: await res.json() }
}

export async function runImportBench(options: Partial<Options> & { log?: (line: string) => void } = {}): Promise<ImportBenchResults> {
  const { cfg, say, results, bench } = beginBench<Options, ImportBenchResults>({
    tag: 'import-bench',
    dbName: IMPORT_DB_NAME,
    prefixLabel: 'benchimport',
    fromEnv: optionsFromEnv(),
    options,
  })
  const problems = results.problems
  try {
    const db = await bench.createDatabase('metrics-bench-import')
    const config = loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      DATABASE_URL: bench.databaseUrl,
      REDIS_URL: bench.redisUrl,
      REDIS_PREFIX: bench.redisPrefix,
      LOG_LEVEL: 'warn',
    })
    const log = createLogger(config)
    const api = await startApi(config, log)
    const workers = await startWorkers(config, log)
    try {
      const account = await createAccount(db, 'import')
      const file = wideCsv(cfg.points, cfg.stats)
      results.fileBytes = Buffer.byteLength(file)
      say(`file: ${cfg.points} points, ${cfg.stats} stats, ${round(results.fileBytes / 1e6, 2)} MB`)

      await bench.stage('parse reference', async () => {
        const t0 = performance.now()
        let records = 0
        parseCsv(file, {
          relax_column_count: true,
          on_record: () => {
            records++
            return null
          },
        })
        results.parseRefMs = round(performance.now() - t0, 1)
        if (records !== Math.ceil(cfg.points / cfg.stats) + 1) problems.push(`parse reference read ${records} records`)
      })

      results.previewMs = []
      await bench.stage('preview', async () => {
        for (let i = 0; i < cfg.previews; i++) {
          const r = await measured(() => post(api.url, account.key, '?dryRun=1', file))
          if (r.value.status !== 200 || r.value.body.points_accepted !== cfg.points)
            problems.push(`preview answered ${r.value.status}: ${JSON.stringify(r.value.body).slice(0, 300)}`)
          results.previewMs!.push(round(r.ms, 1))
          if (!results.previewPeak || r.peak.rssMb > results.previewPeak.rssMb) results.previewPeak = r.peak
          say(`preview ${i + 1}: ${round(r.ms)} ms`)
        }
      })

      await bench.stage('copy reference', async () => {
        const stats = await db<
          { id: string }[]
        >`insert into stats (account_id, name, kind) select ${account.id}, 'copy ref ' || g, 'gauge' from generate_series(1, ${cfg.stats}) g returning id`
        await db`create table bench_import_copy (stat_id uuid not null, ts timestamptz not null, value double precision not null)`
        const t0 = performance.now()
        const writable = await db`copy bench_import_copy (stat_id, ts, value) from stdin`.writable()
        const ts = new Date().toISOString()
        for (let i = 0; i < cfg.points; i += 10_000) {
          let chunk = ''
          for (let j = i; j < Math.min(cfg.points, i + 10_000); j++) chunk += `${stats[j % stats.length].id}\t${ts}\t${(j % 1000) / 7}\n`
          if (!writable.write(chunk)) await once(writable, 'drain')
        }
        writable.end()
        await once(writable, 'finish')
        results.copyRefMs = round(performance.now() - t0, 1)
        await db`delete from stats where name like 'copy ref %'`
      })

      await bench.stage('import', async () => {
        const r = await measured(async () => {
          const t0 = performance.now()
          const res = await post(api.url, account.key, '', file)
          results.acceptMs = round(performance.now() - t0, 1)
          if (res.status !== 202) throw new Error(`import answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`)
          for (;;) {
            const got = await fetch(`${api.url}/api/v1/import/legacy/${res.body.import.id}`, {
              headers: { authorization: `Bearer ${account.key}` },
            })
            const status = ((await got.json()) as { import: { status: string; error: string | null } }).import
            if (status.status === 'completed') return
            if (status.status === 'failed') throw new Error(`import failed: ${status.error}`)
            if (performance.now() - t0 > 600_000) throw new Error('import did not complete within 600 s')
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
        })
        results.importMs = round(r.ms, 1)
        results.importPeak = r.peak
        const [{ n }] = await db<
          { n: number }[]
        >`select count(*)::int as n from points p join stats s on s.id = p.stat_id where s.account_id = ${account.id}`
        results.stored = n
        if (n !== cfg.points) problems.push(`stored ${n} points, expected ${cfg.points}`)
        say(`import: ${round(r.ms)} ms (202 after ${results.acceptMs} ms)`)
      })
    } finally {
      await workers.close()
      await api.close()
    }
  } catch (err) {
    problems.push(`bench failed: ${(err as Error).stack ?? err}`)
  } finally {
    results.finishedAt = new Date().toISOString()
    await bench.close()
  }
  return results
}

export function renderImportReport(r: ImportBenchResults): string {
  const median = r.previewMs?.length
    ? percentile(
        [...r.previewMs].sort((a, b) => a - b),
        0.5,
      )
    : undefined
  const ratio = (a?: number, b?: number) => (a !== undefined && b ? `${round(a / b, 2)}x` : '-')
  const ms = (x?: number) => (x === undefined ? '-' : `${round(x)} ms`)
  const rows = [
    ['measure', 'figure', 'reference (same run)', 'ratio', 'target'],
    [
      'preview (median)',
      ms(median),
      `csv-parse alone ${ms(r.parseRefMs)}`,
      ratio(median, r.parseRefMs),
      `< ${IMPORT_TARGETS.previewMs} ms`,
    ],
    [
      'import to completed',
      ms(r.importMs),
      `PostgreSQL COPY ${ms(r.copyRefMs)}`,
      ratio(r.importMs, r.copyRefMs),
      `< ${IMPORT_TARGETS.importMs} ms`,
    ],
    ['  of which POST to 202', ms(r.acceptMs), '', '', ''],
  ]
  const problems = [...r.problems]
  if (median !== undefined && median > IMPORT_TARGETS.previewMs)
    problems.push(`preview median ${round(median)} ms is over ${IMPORT_TARGETS.previewMs} ms`)
  if (r.importMs !== undefined && r.importMs > IMPORT_TARGETS.importMs)
    problems.push(`import ${round(r.importMs)} ms is over ${IMPORT_TARGETS.importMs} ms`)
  return [
    machineLine('import', r.machine),
    `file: ${r.config.points} points in ${r.config.stats} stats, wide CSV, ${r.fileBytes ? round(r.fileBytes / 1e6, 2) : '-'} MB; ${r.stored ?? '-'} points stored`,
    '',
    ...tableLines(rows, (c) => c === 1 || c === 3),
    '',
    `memory (one process: API, workers, client), peak above the level before the stage: preview RSS +${r.previewPeak?.rssMb ?? '-'} MB (heap +${r.previewPeak?.heapMb ?? '-'} MB), ` +
      `import RSS +${r.importPeak?.rssMb ?? '-'} MB (heap +${r.importPeak?.heapMb ?? '-'} MB)`,
    ...busyLines(r.othersCpuPct),
    ...closingLines(problems, 'ok: targets met'),
  ].join('\n')
}

if (isMain(import.meta.url)) await runStandalone('import-bench', 'import bench', () => runImportBench(), renderImportReport)
