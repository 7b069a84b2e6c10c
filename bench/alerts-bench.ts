// Alerts benchmark (docs/decisions.md §D-T: alerts). Not
// a test: it prints figures and the targets beside them.
//
//   1. Evaluation pass: BENCH_EVAL_STATS stats (1,000; half counters, half
//      gauges, a tenth of them silent for the last 20 minutes) with points
//      over the last half hour, and BENCH_EVAL_ALERTS alerts (10,000) spread
//      over them with every condition type, inserted with SQL (ten business
//      accounts, each at its plan's 1,000-alert limit). evaluateAlerts(sql,
//      now) runs in this process: BENCH_EVAL_PASSES (3) "transition" passes,
//      each from every alert reset to ok with the outbox emptied (the first
//      pass after a deploy, or an incident wave: many fires), then the same
//      number of steady passes (nothing or little changes, the usual case).
//   2. Breach to webhook: an API process and a worker process (the default
//      evaluation interval, 15 s, is left alone; WEBHOOK_ALLOW_PRIVATE=1 so a
//      127.0.0.1 receiver is allowed), a receiver in this process,
//      BENCH_LATENCY_ALERTS (20) `above 100` webhook alerts created through
//      the API on as many gauges, then one breaching value per gauge
//      (POST /api/v1/stats/<name>/value {"value": 1000}) at random times over
//      about a minute; the latency is from the write's 200 to the webhook's
//      arrival. Target: p95 under 60 s. Bounded to about 2.5 minutes.
//
// Own database (metrics_bench_alerts, dropped at the end) and Redis prefix
// (deleted at the end) on the local PostgreSQL and Redis; every request goes
// to 127.0.0.1; children stopped and everything cleaned up also on error and
// on SIGINT/SIGTERM when run standalone (`npx tsx bench/alerts-bench.ts`).
//
// Env: BENCH_EVAL_STATS (1000), BENCH_EVAL_ALERTS (10000), BENCH_EVAL_PASSES
// (3), BENCH_LATENCY_ALERTS (20; 0 skips part 2), BENCH_LATENCY_SPREAD_SECONDS
// (55), DATABASE_URL (server only; postgres://localhost), REDIS_URL
// (redis://127.0.0.1:6379).
import { createHmac, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import { evaluateAlerts } from '../shared/alerts/evaluate.js'
import { createSql, type Sql } from '../shared/db.js'
import {
  beginBench,
  busyLines,
  closingLines,
  envInt,
  isFailed,
  isMain,
  machineLine,
  runStandalone,
  tableLines,
  type BenchResultsBase,
  type Failed,
} from './common.js'
import { freePort, HOST, waitForHttp200, type Child, type Children } from './procs.js'
import { createAccount } from './setup.js'
import { percentile, round, sleep } from './stats.js'

export type { Failed } from './common.js'

export const ALERTS_DB_NAME = 'metrics_bench_alerts'
export const ALERTS_TARGETS = { breachToWebhookP95Ms: 60_000 } as const

export interface AlertsBenchOptions {
  evalStats?: number
  evalAlerts?: number
  evalPasses?: number
  latencyAlerts?: number
  latencySpreadSeconds?: number
  log?: (line: string) => void
}

export interface PassFigures {
  passes: number
  ms: { p50: number; max: number; all: number[] }
  evaluated: number
  /** Deliveries queued by each pass. */
  deliveries: number[]
}

export interface LatencyRow {
  stat: string
  writeOkAt: string
  /** Write's 200 -> the breaching point first seen in `points` (polled every 250 ms). */
  toStoredMs: number | null
  /** Write's 200 -> the first evaluation pass that started after the point was seen stored. */
  toNextPassMs: number | null
  /** Write's 200 -> the delivery row committed by an evaluation pass (the outbox). */
  toQueuedMs: number | null
  /** Write's 200 -> the webhook request arrived at the receiver. */
  toWebhookMs: number | null
  attempts: number | null
}

export interface AlertsBenchResults extends BenchResultsBase<Required<Omit<AlertsBenchOptions, 'log'>>> {
  evaluation?:
    | {
        stats: number
        alerts: number
        points: number
        byCondition: Record<string, number>
        /** From every alert at ok with an empty outbox. */
        transition: PassFigures
        /** Right after, states already settled. */
        steady: PassFigures
        /** Diagnostic: the same steady passes on connections with PostgreSQL's JIT compilation off (jit = off for this database only). */
        steadyJitOff?: PassFigures
        /** The alerts table after the passes: every pass rewrites every alert row. */
        alertsTable: { liveTuples: number; deadTuples: number; plannerRowEstimate: number }
        /** The first transition pass: what it fired, by condition. */
        firstPassFired: Record<string, number>
      }
    | Failed
  latency?:
    | {
        alerts: number
        writes: number
        arrived: number
        ms: { p50: number; p95: number; max: number }
        targetP95Ms: number
        met: boolean
        /** Time from the write to the delivery being queued, and from queued to arrival (p50/max). */
        stages: {
          toStored: { p50: number; max: number }
          toNextPass: { p50: number; max: number }
          toQueued: { p50: number; max: number }
          queuedToWebhook: { p50: number; max: number }
        }
        /** Start times of the evaluation passes seen (alerts.last_evaluated_at), as ms between consecutive passes. */
        passIntervalsMs: number[]
        /** Breaches whose point was stored before a pass started, yet that pass did not queue them. */
        missedByAPass: number
        badSignatures: number
        duplicates: number
        unexpected: string[]
        rows: LatencyRow[]
      }
    | Failed
}

// ---------------------------------------------------------------- helpers

export function alertsOptionsFromEnv(): Required<Omit<AlertsBenchOptions, 'log'>> {
  return {
    evalStats: envInt('BENCH_EVAL_STATS', 1_000, 1),
    evalAlerts: envInt('BENCH_EVAL_ALERTS', 10_000, 1),
    evalPasses: envInt('BENCH_EVAL_PASSES', 3, 1),
    latencyAlerts: envInt('BENCH_LATENCY_ALERTS', 20, 0),
    latencySpreadSeconds: envInt('BENCH_LATENCY_SPREAD_SECONDS', 55, 1),
  }
}

const p = (sorted: number[], q: number) => round(percentile(sorted, q), 0)
const asc = (xs: number[]) => [...xs].sort((a, b) => a - b)

/** A JSON request to the API; resolves with the status, parsed body and the time the answer was complete. */
function request(
  port: number,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: unknown; at: number }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const req = http.request(
      {
        host: HOST,
        port,
        method,
        path,
        headers: { ...headers, ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}) },
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const at = Date.now()
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown = text
          try {
            json = JSON.parse(text)
          } catch {
            /* keep the text */
          }
          resolve({ status: res.statusCode ?? 0, json, at })
        })
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 15 s`)))
    req.on('error', reject)
    req.end(data)
  })
}

// ---------------------------------------------------------------- part 1

async function evaluationPart(
  sql: Sql,
  databaseUrl: string,
  cfg: Required<Omit<AlertsBenchOptions, 'log'>>,
  say: (l: string) => void,
  problems: string[],
): Promise<NonNullable<AlertsBenchResults['evaluation']>> {
  const accounts = 10
  const statsPerAccount = Math.ceil(cfg.evalStats / accounts)
  const ids: string[] = []
  for (let i = 0; i < accounts; i++) ids.push((await createAccount(sql, `eval-${i}`)).id)
  // Stats: even index counter, odd gauge; every tenth silent for the last 20 minutes.
  await sql`
    insert into stats (account_id, name, kind)
    select a.id, 'ev.s' || lpad(i::text, 4, '0'), case when i % 2 = 0 then 'counter' else 'gauge' end
    from unnest(${ids}::uuid[]) with ordinality as a(id, n), generate_series(0, ${statsPerAccount - 1}::int) i
    where (a.n - 1) * ${statsPerAccount}::int + i < ${cfg.evalStats}::int`
  const nowS = Math.floor(Date.now() / 1000)
  // A point every 20 s over the last 30 minutes (silent stats: the 30 minutes before the last 20).
  const [{ points }] = await sql<{ points: number }[]>`
    with ins as (
      insert into points (stat_id, ts, value)
      select s.id, to_timestamp(${nowS}::float8 - k * 20 - case when right(s.name, 1) = '9' then 1200 else 0 end),
             case when s.kind = 'counter' then 1 + floor(random() * 5) else floor(random() * 10000) / 100 end
      from stats s, generate_series(0, 89) k
      returning 1
    ) select count(*)::int as points from ins`
  // Alerts: spread evenly over the stats and the six condition types, thresholds around the data
  // (gauges 0..100 averaged per minute; counters 3 points of 1..5 per minute).
  const perStat = Math.ceil(cfg.evalAlerts / cfg.evalStats)
  await sql`
    with s as (select id, account_id, name, kind, (row_number() over (order by name, account_id) - 1)::int as idx from stats),
    x as (
      select s.*, j, (array['above', 'below', 'pct_change', 'heartbeat', 'missing_data', 'sustained'])[1 + (s.idx * ${perStat}::int + j) % 6] as cond,
             random() as r1, random() as r2
      from s, generate_series(0, ${perStat - 1}::int) j
      where s.idx * ${perStat}::int + j < ${cfg.evalAlerts}::int
    )
    insert into alerts (account_id, stat_name, condition_type, threshold, window_minutes, direction, channel, channel_config, cooldown_minutes, signing_secret, state)
    select account_id, name, cond,
      case when cond = 'pct_change' then (case when r2 < 0.5 then -1 else 1 end) * (10 + r1 * 40)
           when cond in ('heartbeat', 'missing_data') then 0
           when kind = 'counter' then 3 + r1 * 12
           else 30 + r1 * 40 end,
      case when cond in ('heartbeat', 'missing_data') then 5 + floor(r2 * 30)::int
           when cond = 'sustained' then 1 + floor(r2 * 5)::int
           else 5 + floor(r2 * 10)::int end,
      case when r2 < 0.5 then 'above' else 'below' end,
      'webhook', jsonb_build_object('webhook_url', 'http://127.0.0.1:9/hook'), (j * 7) % 31,
      'whsec_bench_' || md5(random()::text), 'ok'
    from x`
  await sql.unsafe('vacuum (analyze) stats, points, alerts, alert_deliveries')
  const byCondition = Object.fromEntries(
    (await sql<{ c: string; n: number }[]>`select condition_type as c, count(*)::int as n from alerts group by 1 order by 1`).map((r) => [
      r.c,
      r.n,
    ]),
  )
  const alerts = Object.values(byCondition).reduce((a, b) => a + b, 0)
  say(
    `evaluation: ${cfg.evalStats} stats, ${points.toLocaleString('en-US')} points, ${alerts.toLocaleString('en-US')} alerts (${Object.entries(
      byCondition,
    )
      .map(([c, n]) => `${c} ${n}`)
      .join(', ')})`,
  )

  const reset = async () => {
    await sql`delete from alert_deliveries`
    await sql`update alerts set state = 'ok', incident_id = null, incident_notified = false, last_notified_at = null, condition_since = null, last_value = null, last_evaluated_at = null`
  }
  const run = async (kind: 'transition' | 'steady', db: Sql = sql): Promise<PassFigures & { firstFired?: Record<string, number> }> => {
    const all: number[] = []
    const deliveries: number[] = []
    let evaluated = 0
    let firstFired: Record<string, number> | undefined
    for (let i = 0; i < cfg.evalPasses; i++) {
      if (kind === 'transition') await reset()
      const t = performance.now()
      const r = await evaluateAlerts(db, new Date())
      const ms = performance.now() - t
      if (r.skipped) problems.push(`evaluation ${kind} pass ${i + 1}: skipped (the advisory lock was held)`)
      all.push(round(ms, 1))
      deliveries.push(r.deliveries.length)
      evaluated = r.evaluated
      if (r.evaluated !== alerts) problems.push(`evaluation ${kind} pass ${i + 1}: evaluated ${r.evaluated} of ${alerts} alerts`)
      if (kind === 'transition' && i === 0) {
        firstFired = Object.fromEntries(
          (
            await sql<{ c: string; n: number }[]>`
          select a.condition_type as c, count(*)::int as n from alert_deliveries d join alerts a on a.id = d.alert_id where d.event = 'fired' group by 1 order by 1`
          ).map((x) => [x.c, x.n]),
        )
      }
      say(
        `  ${kind}${db === sql ? '' : ' (jit off)'} pass ${i + 1}: ${round(ms, 0)} ms, ${r.evaluated} evaluated, ${r.deliveries.length} deliveries queued`,
      )
    }
    const s = asc(all)
    return { passes: all.length, ms: { p50: round(percentile(s, 0.5), 1), max: s[s.length - 1], all }, evaluated, deliveries, firstFired }
  }
  const transition = await run('transition')
  const steady = await run('steady')
  await sleep(600) // PostgreSQL publishes table statistics about twice a second
  const [t] = await sql<
    { live: number; dead: number }[]
  >`select n_live_tup::int as live, n_dead_tup::int as dead from pg_stat_user_tables where relname = 'alerts'`
  const [plan] = await sql<
    { 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }[]
  >`explain (format json) select * from alerts where state in ('ok', 'firing')`
  const alertsTable = {
    liveTuples: t?.live ?? NaN,
    deadTuples: t?.dead ?? NaN,
    plannerRowEstimate: plan['QUERY PLAN'][0].Plan['Plan Rows'],
  }
  // Diagnostic: the same passes with JIT compilation off, on a pool of their own (the setting applies to new connections).
  let steadyJitOff: PassFigures | undefined
  try {
    await sql.unsafe(`alter database "${ALERTS_DB_NAME}" set jit = off`)
    const noJit = createSql(databaseUrl, { max: 2, applicationName: 'metrics-bench-alerts-nojit' })
    try {
      steadyJitOff = await run('steady', noJit)
      delete (steadyJitOff as { firstFired?: unknown }).firstFired
    } finally {
      await noJit.end({ timeout: 2 })
      await sql.unsafe(`alter database "${ALERTS_DB_NAME}" reset jit`)
    }
  } catch (err) {
    say(`  (jit-off diagnostic not run: ${(err as Error).message})`)
  }
  const firstPassFired = transition.firstFired ?? {}
  delete transition.firstFired
  delete steady.firstFired
  return { stats: cfg.evalStats, alerts, points, byCondition, transition, steady, steadyJitOff, alertsTable, firstPassFired }
}

// ---------------------------------------------------------------- part 2

interface Arrival {
  at: number
  path: string
  body: string
  headers: http.IncomingHttpHeaders
}

async function latencyPart(
  sql: Sql,
  children: Children,
  seen: Child[],
  env: Record<string, string>,
  cfg: Required<Omit<AlertsBenchOptions, 'log'>>,
  say: (l: string) => void,
  problems: string[],
): Promise<NonNullable<AlertsBenchResults['latency']>> {
  const n = cfg.latencyAlerts
  const partStarted = Date.now()
  // The receiver: records every request and answers 200 at once.
  const arrivals: Arrival[] = []
  let onArrival: (() => void) | undefined
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      arrivals.push({ at: Date.now(), path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), headers: req.headers })
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
      onArrival?.()
    })
  })
  let watching = false
  const receiverPort = await freePort()
  await new Promise<void>((resolve, reject) => receiver.listen(receiverPort, HOST, resolve).once('error', reject))
  try {
    const apiPort = await freePort()
    const api = children.start('alerts-api', 'api/server.ts', { ...env, PORT: String(apiPort) })
    const worker = children.start('alerts-worker', 'workers/main.ts', env)
    seen.push(api, worker)
    await waitForHttp200(`http://${HOST}:${apiPort}/api/v1/health`, api)
    const acct = await createAccount(sql, 'latency')
    const auth = { authorization: `Bearer ${acct.key}` }
    const names = Array.from({ length: n }, (_, i) => `lat.g${String(i).padStart(2, '0')}`)

    // A normal reading first: creates each gauge, and its arrival in `points` shows the worker is up.
    for (const name of names) {
      const r = await request(apiPort, 'POST', `/api/v1/stats/${name}/value`, auth, { value: 10 })
      if (r.status !== 200)
        throw new Error(`POST /api/v1/stats/${name}/value answered HTTP ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`)
    }
    const until = Date.now() + 30_000
    for (;;) {
      const [{ c }] = await sql<
        { c: number }[]
      >`select count(*)::int as c from points p join stats s on s.id = p.stat_id where s.account_id = ${acct.id}`
      if (c >= n) break
      if (worker.exited)
        throw new Error(`the worker exited (code ${worker.exited.code}, signal ${worker.exited.signal}):\n${worker.tail()}`)
      if (Date.now() > until)
        throw new Error(`the worker did not store the ${n} baseline points within 30 s (${c} stored):\n${worker.tail()}`)
      await sleep(200)
    }

    const secrets = new Map<string, string>()
    for (const name of names) {
      const r = await request(apiPort, 'POST', '/api/v1/alerts', auth, {
        stat_name: name,
        condition_type: 'above',
        threshold: 100,
        channel: 'webhook',
        channel_config: { webhook_url: `http://${HOST}:${receiverPort}/hook/${name}` },
      })
      if (r.status !== 201) throw new Error(`POST /api/v1/alerts answered HTTP ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`)
      secrets.set(name, (r.json as { signing_secret: string }).signing_secret)
    }

    // The breaches: one per gauge at a random moment over the spread.
    const spreadMs = cfg.latencySpreadSeconds * 1000
    const offsets = names.map(() => 1000 + Math.random() * spreadMs).sort((a, b) => a - b)
    say(
      `latency: ${n} alerts created; writing one breach per gauge over the next ${Math.round(spreadMs / 1000)} s, evaluation every 15 s (the default)`,
    )
    const t0 = Date.now()
    // Watches, every 250 ms, when each breaching point is stored and when each evaluation pass ran (last_evaluated_at).
    const storedAt = new Map<string, number>()
    const passTimes = new Set<number>()
    watching = true
    const watcher = (async () => {
      while (watching) {
        const now = Date.now()
        try {
          const stored = await sql<{ name: string }[]>`
            select s.name from stats s where s.account_id = ${acct.id} and exists (select 1 from points p where p.stat_id = s.id and p.value = 1000)`
          for (const r of stored) if (!storedAt.has(r.name)) storedAt.set(r.name, now)
          const [{ t }] = await sql<{ t: Date | null }[]>`select max(last_evaluated_at) as t from alerts where account_id = ${acct.id}`
          if (t) passTimes.add(t.getTime())
        } catch {
          /* the next poll tries again */
        }
        await sleep(250)
      }
    })()
    const writeOk = new Map<string, number>()
    const writes = names.map((name, i) =>
      sleep(offsets[i])
        .then(async () => {
          const r = await request(apiPort, 'POST', `/api/v1/stats/${name}/value`, auth, { value: 1000 })
          if (r.status !== 200)
            problems.push(`latency: breach write for ${name} answered HTTP ${r.status}: ${JSON.stringify(r.json).slice(0, 200)}`)
          else writeOk.set(name, r.at)
        })
        .catch((err: Error) => problems.push(`latency: breach write for ${name} failed: ${err.message}`)),
    )
    await Promise.all(writes)
    // Wait for every fired webhook, at most 70 s after the last write (beyond the target, so a miss shows as a miss).
    const firedFor = () => new Set(arrivals.filter((a) => a.body.includes('"event":"fired"')).map((a) => a.path))
    const deadline = Date.now() + 70_000
    while (firedFor().size < writeOk.size && Date.now() < deadline) {
      await Promise.race([new Promise<void>((r) => (onArrival = r)), sleep(500)])
    }
    onArrival = undefined
    await sleep(1000) // a late duplicate, if any, shows up here
    watching = false
    await watcher
    const passes = [...passTimes].sort((a, b) => a - b)
    const gaps = passes.slice(1).map((t, i) => t - passes[i])
    say(
      `latency: ${firedFor().size} of ${writeOk.size} webhooks arrived ${Math.round((Date.now() - t0) / 1000)} s after the first write was scheduled`,
    )

    // What arrived, checked: one signed `fired` per gauge.
    let badSignatures = 0
    const unexpected: string[] = []
    const firstArrival = new Map<string, number>()
    const perStat = new Map<string, number>()
    for (const a of arrivals) {
      const name = a.path.replace(/^\/hook\//, '')
      let body: { event?: string; stat_name?: string; idempotency_key?: string }
      try {
        body = JSON.parse(a.body) as typeof body
      } catch {
        unexpected.push(`${a.path}: body is not JSON: ${a.body.slice(0, 100)}`)
        continue
      }
      if (body.event !== 'fired' || body.stat_name !== name) {
        unexpected.push(`${a.path}: event ${body.event} for ${body.stat_name}`)
        continue
      }
      perStat.set(name, (perStat.get(name) ?? 0) + 1)
      if (!firstArrival.has(name)) firstArrival.set(name, a.at)
      const sig = String(a.headers['x-service-signature'] ?? '')
      const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig)
      const secret = secrets.get(name)
      const expected = m && secret ? createHmac('sha256', secret).update(`${m[1]}.${a.body}`).digest() : null
      if (!m || !expected || !timingSafeEqual(expected, Buffer.from(m[2], 'hex'))) badSignatures++
      if (a.headers['x-service-idempotency-key'] !== body.idempotency_key)
        unexpected.push(
          `${a.path}: X-Service-Idempotency-Key ${a.headers['x-service-idempotency-key']} differs from the body's ${body.idempotency_key}`,
        )
    }
    const duplicates = [...perStat.values()].reduce((s, c) => s + Math.max(0, c - 1), 0)

    const queued = new Map(
      (
        await sql<{ stat: string; created_at: Date; attempts: number }[]>`
      select a.stat_name as stat, d.created_at, d.attempts from alert_deliveries d join alerts a on a.id = d.alert_id
      where a.account_id = ${acct.id} and d.event = 'fired'`
      ).map((r) => [r.stat, r]),
    )
    const rows: LatencyRow[] = names
      .filter((name) => writeOk.has(name))
      .map((name) => {
        const ok = writeOk.get(name)!
        const q = queued.get(name)
        const arrived = firstArrival.get(name)
        const stored = storedAt.get(name)
        const nextPass = stored === undefined ? undefined : passes.find((t) => t >= stored)
        return {
          stat: name,
          writeOkAt: new Date(ok).toISOString(),
          toStoredMs: stored !== undefined ? stored - ok : null,
          toNextPassMs: nextPass !== undefined ? nextPass - ok : null,
          toQueuedMs: q ? q.created_at.getTime() - ok : null,
          toWebhookMs: arrived !== undefined ? arrived - ok : null,
          attempts: q?.attempts ?? null,
        }
      })
    const lat = asc(rows.map((r) => r.toWebhookMs).filter((x): x is number => x !== null))
    const toStored = asc(rows.map((r) => r.toStoredMs).filter((x): x is number => x !== null))
    const toNextPass = asc(rows.map((r) => r.toNextPassMs).filter((x): x is number => x !== null))
    // The pass that started after the point was seen stored must be the one that queued it (1 s of slack for the clocks and the poll).
    const missed = rows.filter((r) => r.toNextPassMs !== null && (r.toQueuedMs === null || r.toQueuedMs > r.toNextPassMs + 1000))
    if (missed.length) {
      problems.push(
        `latency: ${missed.length} breaches were stored before an evaluation pass started, yet that pass did not queue them: ${missed.map((r) => `${r.stat} (stored +${r.toStoredMs} ms, next pass +${r.toNextPassMs} ms, queued ${r.toQueuedMs === null ? 'never' : `+${r.toQueuedMs} ms`})`).join(', ')}`,
      )
    }
    const badGaps = gaps.filter((g) => g > 20_000)
    if (badGaps.length)
      problems.push(
        `latency: evaluation passes ran ${badGaps.length} time(s) more than 20 s apart (interval 15 s): ${badGaps.map((g) => `${(g / 1000).toFixed(1)} s`).join(', ')}`,
      )
    const toQueued = asc(rows.map((r) => r.toQueuedMs).filter((x): x is number => x !== null))
    const queuedToHook = asc(rows.filter((r) => r.toQueuedMs !== null && r.toWebhookMs !== null).map((r) => r.toWebhookMs! - r.toQueuedMs!))
    const missing = rows.filter((r) => r.toWebhookMs === null)
    if (missing.length) {
      problems.push(
        `latency: ${missing.length} of ${rows.length} breaches never reached the webhook within 70 s of the last write: ${missing.map((r) => `${r.stat} (${r.toQueuedMs === null ? 'never queued' : `queued ${r.toQueuedMs} ms after the write`})`).join(', ')}`,
      )
    }
    if (duplicates) problems.push(`latency: ${duplicates} duplicate fired deliveries`)
    if (badSignatures)
      problems.push(`latency: ${badSignatures} deliveries whose X-Service-Signature does not verify with the alert's signing secret`)
    for (const u of unexpected.slice(0, 5)) problems.push(`latency: unexpected delivery ${u}`)
    // Per the target, missing deliveries count as beyond any bound: p95 over all breaches, not only those that arrived.
    const all = asc(rows.map((r) => r.toWebhookMs ?? Infinity))
    const p95 = percentile(all, 0.95)
    say(`latency: part took ${Math.round((Date.now() - partStarted) / 1000)} s`)
    return {
      alerts: n,
      writes: writeOk.size,
      arrived: lat.length,
      ms: {
        p50: p(all, 0.5),
        p95: Number.isFinite(p95) ? round(p95, 0) : Infinity,
        max: lat.length === rows.length ? lat[lat.length - 1] : Infinity,
      },
      targetP95Ms: ALERTS_TARGETS.breachToWebhookP95Ms,
      met: rows.length > 0 && p95 < ALERTS_TARGETS.breachToWebhookP95Ms,
      passIntervalsMs: gaps,
      missedByAPass: missed.length,
      stages: {
        toStored: { p50: p(toStored, 0.5), max: toStored[toStored.length - 1] ?? NaN },
        toNextPass: { p50: p(toNextPass, 0.5), max: toNextPass[toNextPass.length - 1] ?? NaN },
        toQueued: { p50: p(toQueued, 0.5), max: toQueued[toQueued.length - 1] ?? NaN },
        queuedToWebhook: { p50: p(queuedToHook, 0.5), max: queuedToHook[queuedToHook.length - 1] ?? NaN },
      },
      badSignatures,
      duplicates,
      unexpected,
      rows,
    }
  } finally {
    watching = false
    receiver.closeAllConnections()
    await new Promise<void>((resolve) => receiver.close(() => resolve()))
  }
}

// ---------------------------------------------------------------- the bench

/** Runs both parts and cleans up after itself whatever happens. */
export async function runAlertsBench(options: AlertsBenchOptions = {}): Promise<AlertsBenchResults> {
  const { cfg, say, results, bench } = beginBench<Required<Omit<AlertsBenchOptions, 'log'>>, AlertsBenchResults>({
    tag: 'alerts-bench',
    dbName: ALERTS_DB_NAME,
    prefixLabel: 'benchalerts',
    fromEnv: alertsOptionsFromEnv(),
    options,
  })
  const problems = results.problems
  const { databaseUrl, redisUrl, redisPrefix, children, seen, stage } = bench

  try {
    say(`creating database ${ALERTS_DB_NAME} and migrating`)
    const db = await bench.createDatabase('metrics-bench-alerts')

    results.evaluation = await stage('evaluation', () => evaluationPart(db, databaseUrl, cfg, say, problems)).catch((err: Error) => ({
      error: err.stack ?? err.message,
    }))
    // Part 2 starts from a clean slate: the evaluation's alerts would otherwise fire at a dead address every pass.
    await db`delete from alerts`
    await db`delete from stats`
    await db.unsafe('vacuum (analyze) alerts, alert_deliveries, stats, points')

    if (cfg.latencyAlerts > 0) {
      const env = {
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        REDIS_PREFIX: redisPrefix,
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        PUBLIC_URL: 'http://127.0.0.1',
        WEBHOOK_ALLOW_PRIVATE: '1',
      }
      results.latency = await stage('latency', () => latencyPart(db, children, seen, env, cfg, say, problems)).catch((err: Error) => ({
        error: err.message,
      }))
    }
    for (const c of seen) {
      if (c.warnings)
        problems.push(
          `${c.name} wrote ${c.warnings} warning/error log line(s), e.g. ${c.lines
            .slice(0, 3)
            .map((l) => l.slice(0, 300))
            .join(' | ')}`,
        )
      if (c.exited) problems.push(`${c.name} exited during the run (code ${c.exited.code}, signal ${c.exited.signal})`)
    }
    for (const [name, x] of [
      ['evaluation', results.evaluation],
      ['latency', results.latency],
    ] as const) {
      if (isFailed(x)) problems.push(`${name} FAILED: ${x.error}`)
    }
    return results
  } finally {
    results.finishedAt = new Date().toISOString()
    await bench.close()
  }
}

// ---------------------------------------------------------------- report

export function renderAlertsReport(r: AlertsBenchResults): string {
  const rows: string[][] = [['figure', 'measured', 'target', '']]
  const n = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : x === Infinity ? 'never' : '-')
  const s = (x: number) => (Number.isFinite(x) ? `${(x / 1000).toFixed(1)} s` : x === Infinity ? 'never' : '-')
  const e = r.evaluation
  if (e && !isFailed(e)) {
    rows.push([
      `evaluation pass, ${n(e.alerts)} alerts, transitions: p50 / max ms`,
      `${n(e.transition.ms.p50)} / ${n(e.transition.ms.max)}`,
      '(no figure)',
      '',
    ])
    rows.push([`  deliveries queued per pass`, e.transition.deliveries.map(n).join(', '), '', ''])
    rows.push([
      `evaluation pass, ${n(e.alerts)} alerts, steady: p50 / max ms`,
      `${n(e.steady.ms.p50)} / ${n(e.steady.ms.max)}`,
      '(no figure)',
      '',
    ])
    rows.push([`  deliveries queued per pass`, e.steady.deliveries.map(n).join(', '), '', ''])
    if (e.steadyJitOff)
      rows.push([
        `  same, PostgreSQL JIT off (diagnostic): p50 / max ms`,
        `${n(e.steadyJitOff.ms.p50)} / ${n(e.steadyJitOff.ms.max)}`,
        '',
        '',
      ])
  } else rows.push(['evaluation', e ? `FAILED: ${e.error.split('\n')[0].slice(0, 100)}` : 'not run', '', ''])
  const l = r.latency
  if (l && !isFailed(l)) {
    rows.push([
      `breach -> webhook p50 / p95 / max (${l.arrived}/${l.writes} arrived)`,
      `${s(l.ms.p50)} / ${s(l.ms.p95)} / ${s(l.ms.max)}`,
      `p95 < ${l.targetP95Ms / 1000} s`,
      l.met ? 'met' : 'NOT MET',
    ])
    rows.push([`  write -> point stored (seen), p50 / max`, `${s(l.stages.toStored.p50)} / ${s(l.stages.toStored.max)}`, '', ''])
    rows.push([`  write -> next pass after stored, p50 / max`, `${s(l.stages.toNextPass.p50)} / ${s(l.stages.toNextPass.max)}`, '', ''])
    rows.push([`  write -> queued by a pass, p50 / max`, `${s(l.stages.toQueued.p50)} / ${s(l.stages.toQueued.max)}`, '', ''])
    rows.push([`  queued -> webhook arrived, p50 / max`, `${s(l.stages.queuedToWebhook.p50)} / ${s(l.stages.queuedToWebhook.max)}`, '', ''])
  } else if (l) rows.push(['breach -> webhook', `FAILED: ${l.error.slice(0, 100)}`, '', ''])
  const out = ['', machineLine('alerts', r.machine)]
  if (e && !isFailed(e)) {
    out.push(
      `evaluation data: ${n(e.stats)} stats, ${n(e.points)} points, alerts by condition: ${Object.entries(e.byCondition)
        .map(([c, k]) => `${c} ${k}`)
        .join(', ')}`,
    )
    out.push(
      `alerts table after the passes (every pass rewrites every alert row): ${n(e.alertsTable.deadTuples)} dead row versions (pg_stat), the planner expects ${n(e.alertsTable.plannerRowEstimate)} alerts for ${n(e.alerts)}`,
    )
    out.push(
      `first pass fired: ${
        Object.entries(e.firstPassFired)
          .map(([c, k]) => `${c} ${k}`)
          .join(', ') || 'nothing'
      }`,
    )
  }
  out.push('', ...tableLines(rows))
  if (l && !isFailed(l)) {
    out.push(
      '',
      `evaluation passes seen ${l.passIntervalsMs.length + 1}, intervals (s): ${l.passIntervalsMs.map((g) => (g / 1000).toFixed(1)).join(', ')}`,
    )
    out.push(
      'breach -> webhook per gauge (s): ' +
        l.rows
          .map((x) => `${x.stat.replace('lat.', '')} ${x.toWebhookMs === null ? 'never' : (x.toWebhookMs / 1000).toFixed(1)}`)
          .join(', '),
    )
  }
  out.push(
    ...busyLines(r.othersCpuPct),
    ...closingLines(r.problems, 'Nothing looked wrong: every breach delivered once, signed, no warnings logged.'),
  )
  return out.join('\n')
}

// ---------------------------------------------------------------- standalone

if (isMain(import.meta.url)) await runStandalone('alerts-bench', 'alerts bench', () => runAlertsBench(), renderAlertsReport)
