// `npm run bench:single-cpu`: the web process's CPU per single legacy write against bare Koa's per request
// (docs/decisions.md §27), measured inside one process so that the rest of the machine weighs on every subject
// alike: the service's compiled web server as it runs (the direct route of api/direct-writes.ts ahead of Koa),
// the same server's Koa app alone (on the same dependencies), and bare Koa as bench/koa-ref.ts builds it. Each
// takes the same single `/ez` form writes from the load generator (bench/load.ts, a process of its own) in turn,
// round after round; the figure is this process's CPU (user and system) over a subject's measured window
// divided by the requests answered in it, and the median of the rounds is printed. No worker runs: accepted
// points stay queued in Redis, as in phase F1 of bench:writes, which measures the same with the worker, the
// database and two web processes sharing the machine. Other checkouts given as arguments (paths; their
// `dist/` is built here) are measured beside this one, e.g. a `git worktree` of the code before a change.
//
// Env: BENCH_ROUNDS (5), BENCH_SECONDS (3, per subject and round), BENCH_CONNECTIONS (32, one web process's
// share of bench:writes' 64), BENCH_ACCOUNTS (16), BENCH_DB (metrics_bench_single).
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { envInt, logger, onStopSignals, openBench } from './common.js'
import { koaRef } from './koa-ref.js'
import type { LoadConfig } from './load.js'
import { buildDist, ROOT } from './procs.js'
import { createAccounts } from './setup.js'
import { runLoadProcess, singleGroups } from './workloads.js'

const ROUNDS = envInt('BENCH_ROUNDS', 5, 1)
const SECONDS = envInt('BENCH_SECONDS', 3, 1)
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 32, 1)
const ACCOUNTS = envInt('BENCH_ACCOUNTS', 16, 1)
const STATS = 8

const say = logger('single-cpu')

interface Subject {
  name: string
  port: number
  /** Writes its direct route answered so far (undefined: not the service's server). */
  direct?: () => number
}

const listening = (server: Server) =>
  new Promise<number>((ok, fail) => server.once('listening', () => ok((server.address() as AddressInfo).port)).once('error', fail))

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main(): Promise<void> {
  const roots = [ROOT, ...process.argv.slice(2).map((p) => resolve(p))]
  const bench = openBench({ dbName: process.env.BENCH_DB || 'metrics_bench_single', prefixLabel: 'single', say, othersCpuPct: {} })
  onStopSignals(() => void bench.close().then(() => process.exit(1)))
  const closers: Array<() => Promise<void>> = []
  try {
    const sql = await bench.createDatabase('metrics-bench')
    const accounts = await createAccounts(sql, ACCOUNTS, 'single')
    const names = ['bench.single.', 'bench.warm.'].flatMap((p) => Array.from({ length: STATS }, (_, k) => `${p}${k}`))
    await sql`insert into stats (account_id, name, kind)
      select a, n, 'counter' from unnest(${accounts.map((a) => a.id)}::uuid[]) as a, unnest(${names}::text[]) as n`
    const keys = accounts.map((a) => a.key)

    const subjects: Subject[] = []
    for (const [i, root] of roots.entries()) {
      say(`${root}: compiling (npm run build)`)
      buildDist(root)
      const load = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href)
      const { loadConfig } = await load('shared/config.js')
      const { createLogger } = await load('shared/log.js')
      const { startApi } = await load('api/server.js')
      const { createApp } = await load('api/app.js')
      const { directAnswers } = await load('api/direct-writes.js').catch(() => ({ directAnswers: undefined }))
      const config = loadConfig({
        DATABASE_URL: bench.databaseUrl,
        REDIS_URL: bench.redisUrl,
        REDIS_PREFIX: bench.redisPrefix,
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        PUBLIC_URL: 'http://127.0.0.1',
        PORT: '0',
      })
      const api = await startApi(config, createLogger(config))
      closers.push(() => api.close())
      const label = i === 0 ? 'service' : `service of ${root}`
      subjects.push({ name: label, port: (api.server.address() as AddressInfo).port, direct: directAnswers && (() => directAnswers.count) })
      const koaOnly = createServer(createApp(api.deps).callback() as RequestListener).listen(0, '127.0.0.1')
      closers.push(async () => void koaOnly.close())
      subjects.push({ name: `${label}, Koa route alone`, port: await listening(koaOnly) })
    }
    const bare = createServer(koaRef().callback()).listen(0, '127.0.0.1')
    closers.push(async () => void bare.close())
    subjects.push({ name: 'bare Koa', port: await listening(bare) })

    const runs = new Map<string, number[]>(subjects.map((s) => [s.name, []]))
    const problems: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      // Every other round in reverse order, so that no subject always follows the same one.
      for (const s of round % 2 ? [...subjects].reverse() : subjects) {
        const cfg: LoadConfig = {
          targets: [{ host: '127.0.0.1', port: s.port }],
          connections: CONNECTIONS,
          warmup: { durationMs: 700, groups: singleGroups(keys, 'bench.warm.', STATS) },
          measure: { durationMs: SECONDS * 1000, groups: singleGroups(keys, 'bench.single.', STATS) },
        }
        let from: NodeJS.CpuUsage | undefined
        let direct = 0
        const r = await runLoadProcess(bench.children, 'load', cfg, () => {
          from = process.cpuUsage()
          direct = s.direct?.() ?? 0
        })
        const used = process.cpuUsage(from)
        if (!r.completed) throw new Error(`${s.name}: no write answered`)
        if (r.accepted !== r.completed)
          problems.push(
            `round ${round + 1} ${s.name}: ${r.completed - r.accepted} of ${r.completed} writes not accepted: ${JSON.stringify(r.rejections)}`,
          )
        const us = (used.user + used.system) / r.completed
        runs.get(s.name)!.push(us)
        const share = s.direct ? `, ${Math.round(((s.direct() - direct) / r.completed) * 100)} % by the direct route` : ''
        say(`round ${round + 1} ${s.name}: ${us.toFixed(1)} µs per write, ${r.completed} answered${share}`)
      }
    }
    const bareUs = median(runs.get('bare Koa')!)
    process.stdout.write(`\nCPU per single /ez write in this process, median of ${ROUNDS} rounds (target: at most 1.5x bare Koa):\n`)
    for (const [name, xs] of runs)
      process.stdout.write(`  ${name.padEnd(48)} ${median(xs).toFixed(1).padStart(6)} µs  ${(median(xs) / bareUs).toFixed(2)}x bare Koa\n`)
    for (const p of problems) process.stdout.write(`Looked wrong: ${p}\n`)
    if (problems.length) process.exitCode = 1
  } finally {
    for (const close of closers) await close().catch(() => {})
    await bench.close()
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    process.stderr.write(`bench:single-cpu failed: ${(err as Error).stack ?? err}\n`)
    process.exit(1)
  },
)
