// `npm run soak` (issue 44, decisions.md 26): the service under every kind of load at once, at a steady rate,
// for SOAK_MINUTES (default 30), with a fault every 5 units of time (see below). The rig is the fault
// drills' (test/drills/drills.ts): two web processes and a worker as processes of their own, on a PostgreSQL
// and a Redis of the soak's own (never the machine's shared servers), the write paths and their ledgers, and
// the check of every point against PostgreSQL.
//
// Load: single writes (plain and keyed), /ez and v1 batches, InfluxDB line protocol, Prometheus remote write, each
// at a fixed rate; StatsD counter lines over TCP (no acknowledgement: sent against stored, none twice);
// chart reads (1 h), exports (the last 5 minutes) and dashboard reads; one import half-way; an alert whose stat goes above and below its
// threshold in turns (firing and resolving, delivered to a local webhook receiver); anomaly sweeps on a short
// schedule. Time is counted in units of SOAK_MINUTES x 2 s (a minute in the 30-minute soak, 6 s in the
// 3-minute one), so the shorter forms keep the same shape: a fault every 5 units (kill -9 the worker, kill -9 a
// web process, restart Redis, restart PostgreSQL, fill the persist queue with a burst of history, in turn),
// memory warm-up of 5 units, latency percentiles per unit.
//
// Records each process's resident memory every 10 s (every unit when shorter), p50/p99 of writes and reads per
// unit, and at the end the accepted, stored, lost and doubled counts per path. Targets checked:
// - 0 lost, 0 doubled, nothing refused stored, every alert transition delivered exactly once (always held);
// - memory growth under 10 % after warm-up per process alive that long, the low side of its resident size (what
//   it holds after a full collection) over the last 5 units against the first 5 (Redis' reported, not held: its
//   memory is the idempotency keys it holds for their TTL), p99 per unit within 2x of the first quiet unit past the
//   warm-up, except a fault's own units (from its start until every web process is healthy again) (held when SOAK_MINUTES >= 10: in the shorter forms a unit is a few
//   seconds of a few hundred requests, and the figures are printed, not held).
// Exit code 1 when a held target fails. SOAK_REPORT=<file> also writes the whole report as JSON.
import { readFileSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { startHttpReceiver } from '../../test/helpers/receivers.js'
import { influxPath, remoteWritePath } from './backup-restore.js'
import { backfillPath, DrillRig, ezBatch, http, Ledger, singlePlain, singleWithIkey, storedOf, v1Batch, type WritePath } from './drills.js'

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30)
if (!(MINUTES > 0)) throw new Error('SOAK_MINUTES must be a positive number')
const UNIT_MS = MINUTES * 2000
const TOTAL_MS = MINUTES * 60_000
const FAULT_EVERY_UNITS = 5
const WARMUP_MS = 5 * UNIT_MS
const MEMORY_EVERY_MS = Math.min(10_000, UNIT_MS)
/** Points of the history burst that fills the persist queue. */
const BURST_POINTS = Number(process.env.SOAK_BURST_POINTS ?? (MINUTES >= 10 ? 200_000 : 50_000))
const HELD = MINUTES >= 10
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Requests a second per path (each writer paced alike). */
const RATES: Array<[WritePath, number]> = [
  [singleWithIkey, 20],
  [singlePlain, 20],
  [ezBatch, 2],
  [v1Batch, 2],
  [influxPath, 2],
  [remoteWritePath, 2],
]
/** StatsD counter lines (`<key>.soak.statsd:1|c`) a second, over TCP to each web process's StatsD port in turn. */
const STATSD_LINES_PER_SECOND = 40

interface Sample {
  at: number
  ms: number
  /** Which read (chart, export, dashboard): a breach's slowest reads say what was slow. */
  kind?: string
}
const writes: Sample[] = []
const reads: Sample[] = []
const readFailures: Array<{ at: number; what: string }> = []
const faults: Array<{ name: string; at: number; seconds: number }> = []
const memory: Array<{ at: number; proc: string; rssBytes: number }> = []
/** The service processes' heap and external memory at the same times, from their /metrics: what of the resident size grew. */
const heaps: Array<{ at: number; proc: string; usedBytes: number; totalBytes: number; externalBytes: number }> = []
const loads: Array<{ at: number; load: number }> = []

function rssOf(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

const settings = {
  // Sweeps and compaction on the soak's time scale.
  ANOMALY_SWEEP_INTERVAL_SECONDS: String(Math.max(10, Math.round((5 * UNIT_MS) / 1000))),
  COMPACTION_INTERVAL_SECONDS: String(Math.max(10, Math.round((5 * UNIT_MS) / 1000))),
  STATSD: 'on',
  // Every process serves /metrics on a port of its own (as in production): the soak reads their heaps there.
  METRICS: 'on',
}
const rig = await DrillRig.start(settings)
const receiver = await startHttpReceiver()
const started = Date.now()
const since = () => Date.now() - started
let running = true
const bound = setTimeout(
  () => {
    process.stderr.write('soak: time bound reached, stopping\n')
    process.exit(2)
  },
  TOTAL_MS + 20 * 60_000,
)
bound.unref()

try {
  const web = (i: number) => rig.webs[i % rig.webs.length].port!
  const base = Math.floor(Date.now() / 1000) - 5 * 86_400 // t = base + i stays in the past for 5 days' worth of points
  const ledgers = RATES.map(([path]) => new Ledger(path, `soak.${path.name}`, base))

  // The alert: its stat above the threshold and below it in turns of at least a minute (the condition is the last minute's average).
  const alertStat = 'soak.alert'
  const created = await http(web(0), '/api/v1/alerts', {
    bearer: rig.key,
    json: {
      stat_name: alertStat,
      condition_type: 'above',
      threshold: 100,
      cooldown_minutes: 0,
      channel: 'webhook',
      channel_config: { webhook_url: receiver.url },
    },
  })
  if (created.status !== 201) throw new Error(`alert not created: ${created.status} ${JSON.stringify(created.body)}`)
  const alertId = created.body.alert.id as string
  const phaseMs = Math.max(60_000, 5 * UNIT_MS)

  // Writers: each path's writers paced to its rate; a late request does not make the next one early.
  const counters = RATES.map(() => 0) // a point's value is its number on its path (and its t the base plus it)
  const writers = RATES.flatMap(([path, rate], p) =>
    Array.from({ length: path.writers }, async (_, w) => {
      const ledger = ledgers[p]
      const every = (1000 * path.writers) / rate
      let next = Date.now() + Math.random() * every
      while (running) {
        await sleep(Math.max(0, next - Date.now()))
        next = Math.max(next + every, Date.now())
        const from = counters[p]
        counters[p] += path.batch
        const t0 = performance.now()
        await path.write(
          rig,
          ledger,
          Array.from({ length: path.batch }, (_, k) => from + k),
          w,
        )
        writes.push({ at: since(), ms: performance.now() - t0 })
      }
    }),
  )
  const alertWriter = (async () => {
    while (running) {
      const high = Math.floor(since() / phaseMs) % 2 === 0
      await http(web(Math.floor(Math.random() * 2)), `/api/v1/stats/${alertStat}/value`, {
        bearer: rig.key,
        json: { value: high ? 500 : 1 },
      }).catch(() => undefined)
      await sleep(1000)
    }
  })()

  // StatsD over TCP: no acknowledgement exists, so what a killed web process had not yet read is lost by design;
  // the soak reports lines sent against the sum stored and holds only that nothing was stored twice.
  let statsdSent = 0
  const statsdWriter = (async () => {
    const batch = STATSD_LINES_PER_SECOND / 4
    const line = `${rig.key}.soak.statsd:1|c\n`.repeat(batch)
    for (let i = 0; running; i++) {
      const port = rig.webs[i % rig.webs.length].statsdPort
      const sent = await new Promise<boolean>((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port: port! })
        socket.once('error', () => resolve(false))
        socket.once('connect', () => socket.end(line, () => resolve(true)))
        socket.setTimeout(5000, () => {
          socket.destroy()
          resolve(false)
        })
      })
      if (sent) statsdSent += batch
      await sleep(250)
    }
  })()

  // Readers: a chart, an export and a dashboard in turn, two a second.
  const reader = (async () => {
    // The dashboard names stats, which exist once their first points are stored.
    let dashboardId = ''
    while (running && !dashboardId) {
      const dash = await http(web(0), '/api/v1/dashboards', {
        bearer: rig.key,
        json: { name: 'soak', cards: [{ stats: [`soak.${singlePlain.name}`, `soak.${v1Batch.name}`] }] },
      }).catch(() => undefined)
      if (dash?.status === 201) dashboardId = dash.body.dashboard.id
      else await sleep(200)
    }
    for (let i = 0; running; i++) {
      const stat = `soak.${RATES[i % RATES.length][0].name}`
      const path = [
        `/api/v1/stats/${stat}?range=1h`,
        // The last five minutes, not `range=1h`: an hour's export grows with every minute of the soak (its single
        // writes carry no t), so its latency would climb with the data rather than with anything the service does.
        `/api/v1/export?stat=${stat}&format=csv&from=${new Date(Date.now() - 300_000).toISOString()}`,
        `/api/v1/dashboards/${dashboardId}/data`,
      ][i % 3]
      const t0 = performance.now()
      const res = await http(web(i), path, { bearer: rig.key, timeoutMs: 10_000 }).catch((err: Error) => ({ status: 0, body: err.message }))
      reads.push({ at: since(), ms: performance.now() - t0, kind: ['chart', 'export', 'dashboard'][i % 3] })
      // A stat not written yet answers 404 in the first seconds; anything else not 200 is a failure.
      if (res.status !== 200 && !(res.status === 404 && since() < 10_000))
        readFailures.push({ at: since(), what: `${Math.round(since() / 1000)} s ${path.split('?')[0]}: ${res.status}` })
      await sleep(500)
    }
  })()

  // Memory of every process: the service's, Redis' and PostgreSQL's postmaster.
  const monitor = (async () => {
    const redis = new Redis(rig.redis.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => 500,
    })
    redis.on('error', () => {})
    await redis.connect().catch(() => {})
    while (running) {
      const at = since()
      loads.push({ at, load: Math.round(loadavg()[0] * 10) / 10 })
      for (const p of [...rig.webs, ...rig.workers]) {
        const rss = rssOf(p.child.pid!)
        if (rss) memory.push({ at, proc: `${p.kind}:${p.child.pid}`, rssBytes: rss })
        const text = p.metricsPort ? await http(p.metricsPort, '/metrics').catch(() => undefined) : undefined
        if (text?.status === 200 && typeof text.body === 'string') {
          const sample = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text.body)?.[1])
          heaps.push({
            at,
            proc: `${p.kind}:${p.child.pid}`,
            usedBytes: sample('nodejs_heap_size_used_bytes'),
            totalBytes: sample('nodejs_heap_size_total_bytes'),
            externalBytes: sample('nodejs_external_memory_bytes'),
          })
        }
      }
      const redisPid = Number(/process_id:(\d+)/.exec((await redis.info('server').catch(() => '')) ?? '')?.[1])
      if (redisPid) {
        const rss = rssOf(redisPid)
        if (rss) memory.push({ at, proc: `redis:${redisPid}`, rssBytes: rss })
      }
      const pgPid = (() => {
        try {
          return Number(readFileSync(join(rig.pg.data!, 'postmaster.pid'), 'utf8').split('\n')[0])
        } catch {
          return 0
        }
      })()
      if (pgPid) {
        const rss = rssOf(pgPid)
        if (rss) memory.push({ at, proc: `postgres:${pgPid}`, rssBytes: rss })
      }
      await sleep(MEMORY_EVERY_MS)
    }
    redis.disconnect()
  })()

  // Faults, every 5 units, in turn; the import half-way.
  const burstLedger = new Ledger(backfillPath(BURST_POINTS), 'soak.burst', base)
  const faultList: Array<[string, () => Promise<void>]> = [
    [
      'worker-kill',
      async () => {
        await rig.kill(rig.workers[0])
        await sleep(500)
        await rig.spawn('worker')
      },
    ],
    [
      'web-kill',
      async () => {
        const w = rig.webs[0]
        await rig.kill(w)
        await sleep(1000)
        await rig.spawn('web', w.port)
      },
    ],
    [
      'redis-restart',
      async () => {
        await rig.redis.stop()
        await sleep(2000)
        await rig.redis.start()
      },
    ],
    [
      'postgres-restart',
      async () => {
        await rig.pg.stop()
        await sleep(2000)
        await rig.pg.start()
      },
    ],
    [
      'persist-queue-fill',
      async () => {
        // A history burst from 4 writers as fast as they go: the persist queue fills far past what the worker takes.
        const path = burstLedger.path
        let next = 0
        await Promise.all(
          Array.from({ length: path.writers }, async (_, w) => {
            while (next < BURST_POINTS) {
              const from = next
              next = Math.min(BURST_POINTS, next + path.batch)
              await path.write(
                rig,
                burstLedger,
                Array.from({ length: next - from }, (_, k) => from + k),
                w,
              )
            }
          }),
        )
      },
    ],
  ]
  let importResult: Record<string, unknown> = {}
  const faulter = (async () => {
    for (let k = 1; ; k++) {
      const at = k * FAULT_EVERY_UNITS * UNIT_MS
      if (at >= TOTAL_MS) break
      await sleep(Math.max(0, at - since()))
      if (!running) break
      const [name, fault] = faultList[(k - 1) % faultList.length]
      const t0 = since()
      await fault()
      // The fault lasts until every web process answers health 200 again.
      await rig.healthy(120_000).catch(() => {})
      faults.push({ name, at: t0, seconds: (since() - t0) / 1000 })
      process.stdout.write(`  ${Math.round(t0 / 1000)} s: ${name} (${((since() - t0) / 1000).toFixed(1)} s)\n`)
    }
  })()
  const importer = (async () => {
    await sleep(TOTAL_MS / 2 + UNIT_MS / 2)
    const rows = 2000
    const t = Math.floor(Date.now() / 1000) - 3 * 86_400
    const csv =
      'stat,kind,timestamp,iso_time,value\n' +
      Array.from(
        { length: rows },
        (_, i) => `soak.imported,gauge,${t + i},${new Date((t + i) * 1000).toISOString().replace('.000', '')},${i}`,
      ).join('\n') +
      '\n'
    for (let attempt = 0; attempt < 20; attempt++) {
      const res = await fetch(`http://127.0.0.1:${web(attempt)}/api/v1/import/legacy`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'text/csv' },
        body: csv,
      }).catch(() => undefined)
      const body = res ? await res.json().catch(() => undefined) : undefined
      if (res?.status === 202) {
        importResult = { rows, id: body.import.id }
        return
      }
      if (res && res.status < 500 && res.status !== 429) {
        importResult = { rows, refused: res.status, body }
        return
      }
      await sleep(1000)
    }
    importResult = { rows, refused: 'no answer' }
  })()

  await sleep(Math.max(0, TOTAL_MS - since()))
  running = false
  await Promise.all([...writers, alertWriter, statsdWriter, reader, monitor, faulter, importer])
  process.stdout.write(`  load stopped at ${Math.round(since() / 1000)} s; settling\n`)
  await rig.settle(120_000 + BURST_POINTS / 5)

  // Stored points, per path.
  const results = []
  for (const l of [...ledgers, burstLedger]) results.push(l.check(await storedOf(rig.sql, l.stat), null))
  if (importResult.id) {
    for (let i = 0; i < 120; i++) {
      const res = await http(web(0), `/api/v1/import/legacy/${importResult.id}`, { bearer: rig.key })
      importResult.status = res.body?.import?.status
      if (importResult.status === 'completed' || importResult.status === 'failed') break
      await sleep(500)
    }
    const stored = await storedOf(rig.sql, 'soak.imported')
    importResult.stored = [...stored.values()].reduce((n, s) => n + s.n, 0)
    importResult.distinct = stored.size
  }

  // Every alert transition (its outbox rows) delivered, and accepted by the receiver exactly once.
  let deliveries: Array<{ id: string; event: string; status: string }> = []
  for (let i = 0; i < 240; i++) {
    deliveries = await rig.sql<
      Array<{ id: string; event: string; status: string }>
    >`select id, event, status from alert_deliveries where alert_id = ${alertId} and event in ('fired', 'resolved')`
    if (deliveries.every((d) => d.status !== 'queued')) break
    await sleep(500)
  }
  const received = new Map<string, number>()
  for (const r of receiver.accepted())
    if (r.json?.alert_id === alertId) received.set(r.json.idempotency_key, (received.get(r.json.idempotency_key) ?? 0) + 1)
  const alerts = {
    fired: deliveries.filter((d) => d.event === 'fired').length,
    resolved: deliveries.filter((d) => d.event === 'resolved').length,
    deliveredOnce: deliveries.filter((d) => received.get(d.id) === 1).length,
    notDelivered: deliveries.filter((d) => !received.get(d.id)).length,
    deliveredTwice: deliveries.filter((d) => (received.get(d.id) ?? 0) > 1).length,
    unknownDelivered: [...received.keys()].filter((k) => !deliveries.some((d) => d.id === k)).length,
  }
  const [{ statsdStored }] = await rig.sql<[{ statsdStored: number }]>`
    select coalesce(sum(p.value), 0)::float8 as "statsdStored"
    from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.name = 'soak.statsd'`
  const statsd = { linesSent: statsdSent, stored: statsdStored, notStored: statsdSent - statsdStored }
  const [{ sweeps }] = await rig.sql<[{ sweeps: number }]>`select count(*)::int as sweeps from anomaly_sweeps where finished_at is not null`

  // Latency per unit, memory growth, targets.
  const units = Math.ceil(TOTAL_MS / UNIT_MS)
  const pct = (xs: number[], q: number) => {
    if (!xs.length) return null
    const s = [...xs].sort((a, b) => a - b)
    return Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))] * 10) / 10
  }
  const faultUnits = new Set(
    faults.flatMap((f) => {
      const from = Math.floor(f.at / UNIT_MS)
      const to = Math.floor((f.at + f.seconds * 1000) / UNIT_MS)
      return Array.from({ length: to - from + 1 }, (_, k) => from + k)
    }),
  )
  const perUnit = Array.from({ length: units }, (_, u) => {
    const w = writes.filter((s) => Math.floor(s.at / UNIT_MS) === u).map((s) => s.ms)
    const r = reads.filter((s) => Math.floor(s.at / UNIT_MS) === u).map((s) => s.ms)
    return {
      unit: u,
      fault: faultUnits.has(u),
      writes: w.length,
      writeP50: pct(w, 0.5),
      writeP99: pct(w, 0.99),
      reads: r.length,
      readP50: pct(r, 0.5),
      readP99: pct(r, 0.99),
      // The machine's 1-minute load average at the unit's end: latency on a shared machine follows it.
      load: loads.find((l) => l.at >= (u + 1) * UNIT_MS)?.load ?? loads.at(-1)?.load,
    }
  })
  // The first quiet unit: past the warm-up, no fault in it.
  const quiet = perUnit.find((u) => u.unit * UNIT_MS >= WARMUP_MS && !u.fault) ?? perUnit.find((u) => !u.fault)!
  // A read during a fault (from its start until every web process is healthy again, and a second more) may fail:
  // a killed web process's port refuses, PostgreSQL restarting answers 503. Any other failure counts.
  const inFault = (at: number) => faults.some((f) => at >= f.at && at <= f.at + f.seconds * 1000 + 1000)
  const readsFailedInFaults = readFailures.filter((r) => inFault(r.at)).length
  const readsFailedOutside = readFailures.filter((r) => !inFault(r.at)).map((r) => r.what)
  const latencyBreaches = perUnit.filter(
    (u) =>
      !u.fault &&
      u.unit * UNIT_MS >= WARMUP_MS &&
      ((u.writeP99 ?? 0) > 2 * (quiet.writeP99 ?? Infinity) || (u.readP99 ?? 0) > 2 * (quiet.readP99 ?? Infinity)),
  )
  // A minute's p99 of about 120 reads is its second slowest: name the slowest of each breach.
  const slowestReads = latencyBreaches.map((u) => ({
    unit: u.unit,
    reads: reads
      .filter((s) => Math.floor(s.at / UNIT_MS) === u.unit)
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3)
      .map((s) => ({ kind: s.kind, atS: Math.round(s.at / 100) / 10, ms: Math.round(s.ms * 10) / 10 })),
  }))
  const procs = [...new Set(memory.map((m) => m.proc))]
  const memoryGrowth = procs.map((proc) => {
    const xs = memory.filter((m) => m.proc === proc)
    const first = xs[0].at
    const after = xs.filter((m) => m.at >= Math.max(first, 0) + WARMUP_MS)
    // A Node process's resident size is a saw: V8 lets its old generation fill with what outlived two scavenges
    // until a full collection gives it back (the soak's web processes: heap used 50 -> 110 MB over about 100 s, then
    // 49 again, the resident size 250 -> 172 MB). A window's median so depends on where in the saw its samples fall
    // (a +10.5 % "growth" in one run was a window at the teeth's low side). What a leak raises is the low side, what
    // is held after a full collection: growth is the lowest sample of the last window against the first's, each
    // window the length of a fault's turn (5 units, several teeth), at least 3 samples. The medians are reported too.
    const window = Math.max(3, Math.round((FAULT_EVERY_UNITS * UNIT_MS) / MEMORY_EVERY_MS))
    if (after.length < 2 * window) return { proc, samples: xs.length, growthPct: null, note: 'not alive past warm-up long enough' }
    const [head, tail] = [after.slice(0, window), after.slice(-window)]
    const rss = (ys: typeof xs) => ys.map((m) => m.rssBytes).sort((a, b) => a - b)
    const median = (v: number[]) => v[Math.floor(v.length / 2)]
    const [low0, low1] = [rss(head)[0], rss(tail)[0]]
    const [mid0, mid1] = [median(rss(head)), median(rss(tail))]
    const mib = (n: number | undefined) => (n === undefined ? undefined : Math.round(n / 2 ** 20))
    // The heap over the same samples: the JS heap's lowest used (what a full collection left) and the memory
    // outside it that V8 is told of (Buffers), its median.
    const heapOf = (ys: typeof xs) => heaps.filter((h) => h.proc === proc && h.at >= ys[0].at && h.at <= ys[ys.length - 1].at)
    const heapLow = (ys: typeof xs) => mib(Math.min(...heapOf(ys).map((h) => h.usedBytes)))
    const external = (ys: typeof xs) =>
      mib(
        median(
          heapOf(ys)
            .map((h) => h.externalBytes)
            .sort((a, b) => a - b),
        ),
      )
    return {
      proc,
      samples: xs.length,
      lowMiB: [mib(low0), mib(low1)],
      medianMiB: [mib(mid0), mib(mid1)],
      peakMiB: mib(Math.max(...xs.map((m) => m.rssBytes))),
      growthPct: Math.round((low1 / low0 - 1) * 1000) / 10,
      medianGrowthPct: Math.round((mid1 / mid0 - 1) * 1000) / 10,
      ...(heapOf(after).length ? { heapUsedLowMiB: [heapLow(head), heapLow(tail)], externalMiB: [external(head), external(tail)] } : {}),
    }
  })
  const totals = results.reduce(
    (t, r) => ({
      accepted: t.accepted + r.accepted,
      stored: t.stored + r.stored,
      lost: t.lost + r.lost,
      duplicated: t.duplicated + r.duplicated,
      storedRefused: t.storedRefused + r.storedRefused,
      unknownOutcome: t.unknownOutcome + r.unknownOutcome,
    }),
    { accepted: 0, stored: 0, lost: 0, duplicated: 0, storedRefused: 0, unknownOutcome: 0 },
  )
  const targets = {
    noneLost: totals.lost === 0,
    noneDoubled: totals.duplicated === 0 && totals.storedRefused === 0 && results.every((r) => r.misplaced === 0),
    alertTransitionsDeliveredOnce:
      alerts.fired >= 1 && alerts.resolved >= 1 && alerts.deliveredOnce === alerts.fired + alerts.resolved && alerts.unknownDelivered === 0,
    importStoredOnce:
      importResult.status === 'completed' && importResult.stored === importResult.rows && importResult.distinct === importResult.rows,
    readsAnsweredOutsideFaults: readsFailedOutside.length === 0,
    // StatsD has no acknowledgement: lines a killed process had not read are lost by design; none may count twice.
    statsdNoneDoubled: statsd.stored <= statsd.linesSent && statsd.stored > 0,
    // Redis' memory is the data it holds (idempotency keys live for their TTL, growing with every keyed write): reported, not held.
    memoryGrowthUnder10Pct: memoryGrowth.every((m) => m.growthPct === null || m.growthPct < 10 || m.proc.startsWith('redis:')),
    p99Within2xOfFirstQuietUnit: latencyBreaches.length === 0,
  }
  const held: Array<keyof typeof targets> = [
    'noneLost',
    'noneDoubled',
    'alertTransitionsDeliveredOnce',
    'importStoredOnce',
    'readsAnsweredOutsideFaults',
    'statsdNoneDoubled',
    ...(HELD ? (['memoryGrowthUnder10Pct', 'p99Within2xOfFirstQuietUnit'] as const) : []),
  ]
  const report = {
    minutes: MINUTES,
    unitSeconds: UNIT_MS / 1000,
    requests: { writes: writes.length, reads: reads.length },
    totals,
    paths: results,
    import: importResult,
    statsd,
    alerts,
    anomalySweeps: sweeps,
    faults,
    quietUnit: quiet.unit,
    perUnit,
    latencyBreaches: latencyBreaches.map((u) => u.unit),
    slowestReads,
    memoryGrowth,
    readsFailedInFaults,
    readsFailedOutside: readsFailedOutside.slice(0, 20),
    targets,
    held,
  }
  if (process.env.SOAK_REPORT) writeFileSync(process.env.SOAK_REPORT, JSON.stringify({ ...report, memory, heaps }, null, 1))
  process.stdout.write(`\nper unit (${UNIT_MS / 1000} s): unit fault writes p50 p99 reads p50 p99 (ms) load\n`)
  for (const u of perUnit)
    process.stdout.write(
      `  ${u.unit}\t${u.fault ? 'F' : '-'}\t${u.writes}\t${u.writeP50}\t${u.writeP99}\t${u.reads}\t${u.readP50}\t${u.readP99}\t${u.load}\n`,
    )
  if (slowestReads.length) process.stdout.write(`slowest reads of the units over 2x: ${JSON.stringify(slowestReads)}\n`)
  process.stdout.write(`\nmemory: ${JSON.stringify(memoryGrowth)}\n`)
  process.stdout.write(`paths: ${JSON.stringify(results)}\nstatsd: ${JSON.stringify(statsd)}\n`)
  process.stdout.write(
    `totals: ${JSON.stringify(totals)}\nimport: ${JSON.stringify(importResult)}\nalerts: ${JSON.stringify(alerts)}\nanomaly sweeps finished: ${sweeps}\nreads failed during faults: ${readsFailedInFaults}, outside: ${readsFailedOutside.length} ${JSON.stringify(readsFailedOutside.slice(0, 5))}\n`,
  )
  process.stdout.write(`targets: ${JSON.stringify(targets)} (held: ${held.join(', ')})\n`)
  const failed = held.filter((k) => !targets[k])
  process.stdout.write(failed.length ? `SOAK FAILED: ${failed.join(', ')}\n` : 'soak passed\n')
  process.exitCode = failed.length ? 1 : 0
} catch (err) {
  // What the service processes said last, and whether they were still alive: the first thing to look at.
  for (const p of [...rig.webs, ...rig.workers]) {
    process.stdout.write(
      `\n${p.kind} ${p.child.pid} (exit ${p.child.exitCode ?? p.child.signalCode ?? 'alive'}):\n${p.lines.slice(-15).join('\n')}\n`,
    )
  }
  throw err
} finally {
  running = false
  await rig.close()
  await receiver.close()
}
