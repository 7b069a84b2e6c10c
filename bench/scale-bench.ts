// `npm run bench:scale`: what a worker process and a Redis shard carry (docs/decisions.md §22). Not a test: it
// prints figures. For each set-up (a single Redis, and a Redis Cluster of 3 masters + 3 replicas started here;
// 1 and 2 worker processes) it queues the same backlog of persist-points jobs while no worker runs, starts the
// workers, and times the drain until every point is in PostgreSQL: points stored per second, and the CPU each
// Redis node and the workers spent per 1,000 points. The web tier is not part of it (bench:writes measures that).
//
// Env: BENCH_POINTS (200000), BENCH_JOB_POINTS (points per job, 100: about what the group commit packs under load),
// BENCH_STATS (200), DATABASE_URL (server only; postgres://localhost), REDIS_URL (the single node,
// redis://127.0.0.1:6379). Local only; a database and key prefix of its own, dropped afterwards.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { withDatabase } from '../shared/db.js'
import { Queues } from '../shared/queues.js'
import { createRedis, deleteKeys } from '../shared/redis.js'
import { startRedisCluster } from '../test/helpers/redis-cluster.js'
import { envInt } from './common.js'
import { processCpuMs } from './machine.js'
import { ROOT } from './procs.js'
import { assertLocal, createMigratedDatabase, dropDatabase, serverUrl } from './setup.js'

const POINTS = envInt('BENCH_POINTS', 200_000, 1000)
const JOB_POINTS = envInt('BENCH_JOB_POINTS', 100, 1)
const STATS = envInt('BENCH_STATS', 200, 1)
const DB = 'metrics_bench_scale'
const single = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
assertLocal(serverUrl(), 'DATABASE_URL')
assertLocal(single, 'REDIS_URL')
const databaseUrl = withDatabase(serverUrl(), DB)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const sql = await createMigratedDatabase(databaseUrl, DB, 'metrics-bench-scale')
const [account] = await sql<
  { id: string }[]
>`insert into accounts (email, password_hash, plan) values ('scale@bench.local', 'x', 'business') returning id`
const statIds = (
  await sql<{ id: string }[]>`
  insert into stats (account_id, name, kind) select ${account.id}, 'scale.' || i, 'gauge' from generate_series(1, ${STATS}) i returning id`
).map((r) => r.id)

interface Row {
  setup: string
  workers: number
  pointsPerSecond: number
  workerCpuMsPer1k: number
  redisCpuMsPer1k: string
}

async function run(setup: string, redisUrl: string, redisPids: () => Array<number | undefined>, workers: number): Promise<Row> {
  // Batch ids are recorded once applied (a re-run stores nothing): each run starts from empty tables.
  await sql`truncate points, point_ikeys, applied_batches`
  const prefix = `scale${randomBytes(3).toString('hex')}`
  const connection = createRedis({ redisUrl })
  const queues = new Queues({ redisPrefix: prefix }, connection)
  const now = Math.floor(Date.now() / 1000)
  for (let queued = 0, job = 0; queued < POINTS; job++) {
    const n = Math.min(JOB_POINTS, POINTS - queued)
    const points = Array.from(
      { length: n },
      (_, i) =>
        [statIds[(queued + i) % STATS], now - 86_400 + Math.floor((queued + i) / STATS), (queued + i) % 997, null] as [
          string,
          number,
          number,
          null,
        ],
    )
    await queues.enqueue('persist-points', { batch_id: `b${job}`, points })
    queued += n
  }
  const env = { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, LOG_LEVEL: 'warn' }
  const pids = () => redisPids().filter((p): p is number => p !== undefined)
  const redisBefore = pids().map((p) => processCpuMs([p]))
  const output: string[] = []
  const children: ChildProcess[] = Array.from({ length: workers }, () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (c: Buffer) => output.push(c.toString('utf8')))
    return child
  })
  const started = Date.now()
  let stored = 0
  let progressAt = started
  while (stored < POINTS) {
    await sleep(100)
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from points`
    if (n > stored) progressAt = Date.now()
    stored = n
    if (Date.now() - progressAt > 30_000) {
      const [failed] = await queues.get('ingest').getFailed(0, 0)
      throw new Error(
        `${setup}: ${stored} of ${POINTS} points stored, none for 30 s (${JSON.stringify(await queues.get('ingest').getJobCounts())}${failed ? `, a failed job: ${failed.failedReason}` : ''}); the workers said:\n${output.join('').slice(-3000)}`,
      )
    }
  }
  const seconds = (Date.now() - started) / 1000
  const workerCpu = processCpuMs(children.map((c) => c.pid!))
  const redisCpu = pids().map((p, i) => processCpuMs([p]) - (redisBefore[i] ?? 0))
  for (const c of children) c.kill('SIGKILL')
  await queues.close()
  await deleteKeys(connection, `${prefix}:*`)
  connection.disconnect()
  return {
    setup,
    workers,
    pointsPerSecond: Math.round(POINTS / seconds),
    // Start-up (module loading) included: a fixed cost that a longer backlog dilutes.
    workerCpuMsPer1k: Math.round((workerCpu / POINTS) * 1000 * 10) / 10,
    redisCpuMsPer1k: redisCpu.map((ms) => (Math.round((ms / POINTS) * 1000 * 10) / 10).toFixed(1)).join(' / '),
  }
}

const rows: Row[] = []
const probe = createRedis({ redisUrl: single })
const singlePid = Number(/^process_id:(\d+)/m.exec(await probe.info('server'))?.[1]) || undefined
probe.disconnect()
try {
  for (const w of [1, 2]) rows.push(await run('single Redis', single, () => [singlePid], w))
  const cluster = await startRedisCluster()
  try {
    const masters = await cluster.masters()
    for (const w of [1, 2]) rows.push(await run('Redis Cluster, 3 masters', cluster.url, () => masters.map((m) => m.pid()), w))
  } finally {
    await cluster.destroy()
  }
} finally {
  await sql.end({ timeout: 2 })
  await dropDatabase(DB)
}
process.stdout.write(
  `\n${POINTS} points in jobs of ${JOB_POINTS}, ${STATS} stats; drained by worker processes started after the backlog was queued\n\n`,
)
process.stdout.write(
  '| set-up | workers | points stored/s | worker CPU ms per 1,000 points | Redis CPU ms per 1,000 points (per master) |\n|---|---|---|---|---|\n',
)
for (const r of rows)
  process.stdout.write(`| ${r.setup} | ${r.workers} | ${r.pointsPerSecond} | ${r.workerCpuMsPer1k} | ${r.redisCpuMsPer1k} |\n`)
