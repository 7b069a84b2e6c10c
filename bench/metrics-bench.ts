// bench:metrics (issue 44): what a /metrics scrape costs the scraped process, in ms of its CPU (target: under
// 5 ms). A web process and a worker run as production runs them (dist/, NODE_ENV=production; BENCH_FROM_SOURCE=1
// for the sources through tsx, BENCH_NODE_ARGS for node's flags), each with METRICS_PORT, on a database of
// the bench's own and a Redis prefix of its own, after a few thousand points through the write routes (so that
// every counter and queue has values; the schedules that would run during the bench are set an hour apart).
// Per process, after a warm-up of scrapes until a minute passes without a full collection (BENCH_METRICS_WARM_QUIET_S;
// at most 4 minutes), CPU by the scheduler's count in ns for every thread:
// - uncached: BENCH_METRICS_SPACED rounds of three windows (see measure()), one from just before a scrape (which
//   reads the queue and the database afresh, as a Prometheus scraping every 15 s does) to 100 ms past its answer,
//   one idle and as long, one for a 404 from the same listener (the floor): the mean difference per scrape, its
//   standard error and median, by thread, and the floor's;
// - back to back: BENCH_METRICS_SCRAPES scrapes in a row (the queue and database reads are shared within 2 s),
//   less the idle rate of the 10 s before, per scrape.
import { randomBytes } from 'node:crypto'
import { mean, sampleStandardDeviation } from 'simple-statistics'
import { createSql } from '../shared/db.js'
import { createTestDatabase, prepareTemplate } from '../test/helpers/db.js'
import { envInt, logger } from './common.js'
import { threadCpuMs } from './machine.js'
import { buildDist, Children, freePort, HOST, waitForHttp200, type Child } from './procs.js'
import { createAccount, deleteRedisPrefix } from './setup.js'
import { percentile, round, sleep } from './stats.js'

const SCRAPES = envInt('BENCH_METRICS_SCRAPES', 300, 1)
const SPACED = envInt('BENCH_METRICS_SPACED', 30, 1)
const AFTER_MS = 100
const WARM_QUIET_MS = envInt('BENCH_METRICS_WARM_QUIET_S', 60, 0) * 1000
const WARM_MAX_MS = 240_000
const FROM_SOURCE = process.env.BENCH_FROM_SOURCE === '1'
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)
const say = logger('bench:metrics')
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'

await prepareTemplate()
const db = await createTestDatabase()
const prefix = `bm${randomBytes(4).toString('hex')}`
const children = new Children()
process.on('exit', () => children.killAllNow())
try {
  const [webPort, webMetrics, workerMetrics] = [await freePort(), await freePort(), await freePort()]
  const env = (metricsPort: number, port = 0) => ({
    NODE_ENV: FROM_SOURCE ? 'development' : 'production',
    PUBLIC_URL: 'http://127.0.0.1',
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    METRICS_HOST: HOST,
    ALERT_EVAL_INTERVAL_SECONDS: '3600',
    ANOMALY_SWEEP_INTERVAL_SECONDS: '3600',
  })
  // As production runs them (the Procfile's dist/, NODE_ENV=production), unless BENCH_FROM_SOURCE=1 (tsx's loader).
  if (!FROM_SOURCE) buildDist()
  const script = (path: string) => (FROM_SOURCE ? path : `dist/${path.replace(/\.ts$/, '.js')}`)
  const web = children.start('metrics-web', script('api/server.ts'), env(webMetrics, webPort), undefined, NODE_ARGS)
  const worker = children.start('metrics-worker', script('workers/main.ts'), env(workerMetrics), undefined, NODE_ARGS)
  const base = `http://${HOST}:${webPort}`
  await waitForHttp200(`${base}/api/v1/health`, web, 60_000)
  await waitForHttp200(`http://${HOST}:${workerMetrics}/metrics`, worker, 60_000)

  // A business-plan account, a key, and points on every write route.
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return res
  }
  const sql = createSql(db.url, { max: 1 })
  const { key } = await createAccount(sql, 'bench-metrics')
  const auth = { authorization: `Bearer ${key}` }
  for (let s = 0; s < 20; s++) {
    await post('/api/v1/points', { points: Array.from({ length: 100 }, (_, i) => ({ stat: `bench.m${s}`, value: i })) }, auth)
    for (let i = 0; i < 5; i++) await post(`/api/v1/stats/bench.m${s}/value`, { value: i }, auth)
    await post('/ez', { ezkey: key, data: [{ stat: `bench.m${s}`, value: 1 }] })
  }
  await sleep(3000)

  const measure = async (child: Child, url: string) => {
    const pid = child.proc.pid!
    let text = ''
    const scrape = async () => {
      const res = await fetch(url)
      if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
      text = await res.text()
      return text.length
    }
    // The process's own count (process.cpuUsage, µs) of the CPU from a scrape's arrival to its text being built.
    const selfReported = () => ({
      n: Number(/^metrics_service_scrapes_total (\S+)$/m.exec(text)![1]),
      s: Number(/^metrics_service_scrape_cpu_seconds_total (\S+)$/m.exec(text)![1]),
    })
    // Collections the process counted, by kind (its own nodejs_gc_duration_seconds).
    const gcs = (kind: 'minor' | 'major') =>
      Number(new RegExp(`^nodejs_gc_duration_seconds_count\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0)
    // Warm-up, unmeasured: scrapes 2.1 s apart (as a Prometheus that has been scraping the process) until
    // WARM_QUIET_MS pass without a full collection. Some 45 s after the start and the writes, V8's memory reducer
    // collects their garbage in two full collections, about 100 ms of main-thread CPU and as much on its own
    // threads; that once-after-a-burst work fell into the first rounds' windows, scrape or idle as it happened,
    // and made the standard error as large as the target.
    const warmStart = performance.now()
    let lastMajor = performance.now()
    await scrape()
    let majors = gcs('major')
    while (performance.now() - lastMajor < WARM_QUIET_MS && performance.now() - warmStart < WARM_MAX_MS) {
      await sleep(2100)
      await scrape()
      if (gcs('major') !== majors) [majors, lastMajor] = [gcs('major'), performance.now()]
    }
    const warmUpS = round((performance.now() - warmStart) / 1000, 0)
    const bytes = await scrape()
    const self0 = selfReported()
    const gc0 = gcs('minor')
    const major0 = gcs('major')
    // Per thread: the scraping windows' CPU less the idle ones' (where off the main thread the cost falls).
    const threads = new Map<string, number>()
    const cpuNow = () => threadCpuMs(pid)
    const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)
    // Each round: a window from just before a scrape to AFTER_MS past its answer (what the scrape set off on other
    // threads, a collection or a compilation, included), an idle window as long and one for a 404 from the same
    // listener (the floor: the HTTP and the wake-up, no metrics work), in rotating order, each
    // after 2.1 s unmeasured (so every scrape reads the queue and the database afresh). Windows this short leave out
    // nearly all of the process's own periodic work (BullMQ's checks, a collection the process was due anyway),
    // which in whole 2.1 s windows made the standard error as large as the target.
    const diffs: number[] = []
    const floors: number[] = []
    let lastScrapeMs = 20
    const orders: ('idle' | 'scrape' | 'floor')[][] = [
      ['idle', 'scrape', 'floor'],
      ['scrape', 'floor', 'idle'],
      ['floor', 'idle', 'scrape'],
    ]
    for (let i = 0; i < SPACED; i++) {
      const used = { idle: 0, scrape: 0, floor: 0 }
      const byThread = new Map<string, number>()
      for (const kind of orders[i % orders.length]) {
        await sleep(2100)
        const before = cpuNow()
        const t0 = performance.now()
        if (kind === 'scrape') {
          await scrape()
          lastScrapeMs = performance.now() - t0
        } else if (kind === 'floor') {
          const res = await fetch(url.replace(/\/metrics$/, '/floor'))
          if (res.status !== 404) throw new Error(`floor: ${res.status}`)
          await res.text()
          await sleep(Math.max(0, lastScrapeMs - (performance.now() - t0)))
        } else await sleep(lastScrapeMs)
        await sleep(AFTER_MS)
        const after = cpuNow()
        used[kind] = total(after) - total(before)
        const sign = kind === 'scrape' ? 1 : kind === 'idle' ? -1 : 0
        for (const [name, ms] of after) byThread.set(name, (byThread.get(name) ?? 0) + sign * (ms - (before.get(name) ?? 0)))
      }
      for (const [name, ms] of byThread) threads.set(name, (threads.get(name) ?? 0) + ms)
      diffs.push(used.scrape - used.idle)
      floors.push(used.floor - used.idle)
    }
    const uncached = mean(diffs)
    const floor = mean(floors)
    const stdErr = (xs: number[]) => (xs.length > 1 ? sampleStandardDeviation(xs) / Math.sqrt(xs.length) : 0)
    const self1 = selfReported()
    const gc1 = gcs('minor')
    const major1 = gcs('major')
    const uncachedSelfReported = round(((self1.s - self0.s) * 1000) / (self1.n - self0.n), 2)
    // Back to back, less the idle rate of a 10 s window just before.
    const idle0 = total(cpuNow())
    const idleT0 = performance.now()
    await sleep(10_000)
    const idlePerMs = (total(cpuNow()) - idle0) / (performance.now() - idleT0)
    const cpu0 = total(cpuNow())
    const t0 = performance.now()
    for (let i = 0; i < SCRAPES; i++) await scrape()
    const backToBack = round((total(cpuNow()) - cpu0 - idlePerMs * (performance.now() - t0)) / SCRAPES, 2)
    return {
      bytes,
      idleCpuPct: round(idlePerMs * 100, 2),
      uncachedMsPerScrape: round(uncached, 2),
      uncachedStdErrMs: round(stdErr(diffs), 2),
      uncachedMedianMs: round(
        percentile(
          [...diffs].sort((a, b) => a - b),
          0.5,
        ),
        2,
      ),
      floorMsPerRequest: round(floor, 2),
      floorStdErrMs: round(stdErr(floors), 2),
      uncachedToFloor: round(uncached / floor, 2),
      uncachedSelfReportedMs: uncachedSelfReported,
      minorGcsPerRound: round((gc1 - gc0) / SPACED, 2),
      majorGcs: major1 - major0,
      warmUpS,
      uncachedByThreadMs: Object.fromEntries([...threads].map(([name, ms]) => [name, round(ms / SPACED, 2)])),
      backToBackMsPerScrape: backToBack,
    }
  }
  const results = {
    web: await measure(web, `http://${HOST}:${webMetrics}/metrics`),
    worker: await measure(worker, `http://${HOST}:${workerMetrics}/metrics`),
  }
  await sql.end()
  say(
    `CPU of the scraped process per /metrics scrape (ms; target < 5), ${SPACED} uncached scrapes 2.1 s apart and ${SCRAPES} back to back:`,
  )
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`)
} finally {
  await children.stopAll()
  await deleteRedisPrefix(redisUrl, prefix).catch(() => {})
  await db.drop()
}
