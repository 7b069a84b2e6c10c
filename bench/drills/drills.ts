// Fault drills: the service as operators run it, two web processes
// and a worker as child processes, against a PostgreSQL and a Redis of the
// drill's own, under steady writes on the paths clients use while a fault is
// injected (see WritePath below for each path and what "doubled" means on it).
// Every point has its own value, by which it is found afterwards in PostgreSQL:
// accepted, stored, lost, duplicated, misplaced, stored-though-refused and
// unknown-outcome counts per drill and path.
//
// A drill is one entry of drills(): a fault, or a fault with the paths to write
// on while it runs (backfill-burst). A drill of another file (a compaction
// killed half-way) is registered there with one line.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { createSql, type Sql } from '../../shared/db.js'
import { Queues } from '../../shared/queues.js'
import { createRedis } from '../../shared/redis.js'
import { closedPort } from '../../test/helpers/http.js'
import { serviceArgs } from '../../test/helpers/processes.js'
import { startOwnPostgres, type OwnPostgres } from '../../test/helpers/own-postgres.js'
import { startOwnRedis, type OwnRedis } from '../../test/helpers/redis-server.js'

export interface DrillResult {
  drill: string
  /** The write path (WritePath.name) these counts are of. */
  path: string
  sent: number
  accepted: number
  stored: number
  lost: number
  /**
   * Accepted points a Redis restarted empty took with it: queued, not yet persisted, at the instant of the wipe
   * (only the drills that wipe Redis; such a Redis has lost whatever it held). Counted apart from `lost`.
   */
  lostInWipe: number
  /** How long before the wipe the earliest of those was accepted, in ms: the window a wipe costs. */
  wipeWindowMs: number | null
  duplicated: number
  /** Points the service refused in the end (the writer gave up on definite errors) that are stored anyway. */
  storedRefused: number
  unknownOutcome: number
  /**
   * Points stored at another second than they were written for: their explicit `t`, or (without `t`) a second one
   * of their attempts that may have landed was in flight in.
   */
  misplaced: number
  /** Seconds from the fault's end until every process served again (health 200). */
  recoverySeconds: number
  /** Log lines of level warn or error written by the processes during the drill. */
  logLines: number
}

interface Proc {
  kind: 'web' | 'worker'
  child: ChildProcess
  port?: number
  /** The web process's StatsD port (UDP and TCP), when the rig's settings ask for StatsD (`STATSD: 'on'`). */
  statsdPort?: number
  /** The process's /metrics port, when the rig's settings ask for metrics (`METRICS: 'on'`). */
  metricsPort?: number
  lines: string[]
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export class DrillRig {
  private procs: Proc[] = []
  private queues!: Queues
  private queueRedis!: Redis
  sql!: Sql
  key = ''
  /** How long a drill may take to recover and drain after its fault before it counts as failed. */
  settleTimeoutMs = 60_000
  /** When a drill wiped Redis (set by the fault). */
  wipedAt: number | null = null
  /** The ledgers of the last drill run (a drill checking them elsewhere, as backup-restore does on the restored servers). */
  ledgers: Ledger[] = []
  private constructor(
    readonly pg: OwnPostgres,
    readonly redis: OwnRedis,
    readonly prefix: string,
    private readonly settings: Record<string, string>,
  ) {}

  /**
   * `settings`: extra environment for every process the rig starts (the service's defaults otherwise).
   * `backing`: the PostgreSQL and Redis to run on (default: a server of each of the drill's own).
   */
  static async start(settings: Record<string, string> = {}, backing?: () => Promise<[OwnPostgres, OwnRedis]>): Promise<DrillRig> {
    const [pg, redis] = backing ? await backing() : await Promise.all([startOwnPostgres(), startOwnRedis({ aof: true })])
    const rig = new DrillRig(pg, redis, `drill${randomBytes(3).toString('hex')}`, settings)
    rig.sql = createSql(pg.url, { max: 2 })
    rig.queueRedis = createRedis({ redisUrl: redis.url })
    rig.queues = new Queues({ redisPrefix: rig.prefix }, rig.queueRedis)
    await Promise.all([rig.spawn('web'), rig.spawn('web'), rig.spawn('worker')])
    const web = rig.webs[0].port!
    const signup = await http(web, '/api/v1/auth/signup', { json: { email: `drill@example.com`, password: 'correct horse battery' } })
    if (signup.status !== 201)
      throw new Error(`sign-up failed: ${signup.status} ${JSON.stringify(signup.body)}\n${rig.webs[0].lines.join('\n')}`)
    await rig.sql`update accounts set plan = 'business' where id = ${signup.body.account.id}`
    const cookie = signup.headers
      .getSetCookie()
      .find((c) => c.startsWith('service_session='))!
      .split(';')[0]
    const created = await http(web, '/api/v1/auth/api-keys', {
      json: { label: 'drill' },
      headers: { cookie, 'x-service-csrf': signup.body.csrf_token },
    })
    rig.key = created.body.key
    return rig
  }

  /**
   * The service (two web processes and a worker) on servers already holding an account and a key, under the
   * given Redis prefix: a restore of another rig's servers (backup-restore).
   */
  static async attach(
    pg: OwnPostgres,
    redis: OwnRedis,
    prefix: string,
    key: string,
    settings: Record<string, string> = {},
  ): Promise<DrillRig> {
    const rig = new DrillRig(pg, redis, prefix, settings)
    rig.key = key
    rig.sql = createSql(pg.url, { max: 2 })
    rig.queueRedis = createRedis({ redisUrl: redis.url })
    rig.queues = new Queues({ redisPrefix: rig.prefix }, rig.queueRedis)
    await Promise.all([rig.spawn('web'), rig.spawn('web'), rig.spawn('worker')])
    return rig
  }

  /** Stops every service process (kill -9), leaving PostgreSQL and Redis running. */
  async stopService(): Promise<void> {
    await Promise.all([...this.procs].map((p) => this.kill(p)))
  }

  get webs(): Proc[] {
    return this.procs.filter((p) => p.kind === 'web')
  }

  get workers(): Proc[] {
    return this.procs.filter((p) => p.kind === 'worker')
  }

  /** Starts a web process (on a port of its own) or a worker, and waits until it answers. */
  async spawn(kind: 'web' | 'worker', port?: number): Promise<Proc> {
    port ??= kind === 'web' ? await closedPort() : undefined
    // Each web process listens for StatsD on a port of its own (two on one port would collide).
    const statsdPort = kind === 'web' && this.settings.STATSD === 'on' ? await closedPort() : undefined
    const metricsPort = this.settings.METRICS === 'on' ? await closedPort() : undefined
    const env = {
      ...process.env,
      NODE_ENV: 'development',
      DATABASE_URL: this.pg.url,
      REDIS_URL: this.redis.url,
      REDIS_PREFIX: this.prefix,
      LOG_LEVEL: 'warn',
      ALERT_EVAL_INTERVAL_SECONDS: '2',
      ...this.settings,
      ...(port ? { PORT: String(port) } : {}),
      ...(statsdPort ? { STATSD_PORT: String(statsdPort) } : {}),
      ...(metricsPort ? { METRICS_PORT: String(metricsPort) } : {}),
    }
    const child = spawn(process.execPath, serviceArgs(kind === 'web' ? 'api/server.ts' : 'workers/main.ts'), {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const proc: Proc = { kind, child, port, statsdPort, metricsPort, lines: [] }
    const collect = (chunk: Buffer) => proc.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean))
    child.stdout!.on('data', collect)
    child.stderr!.on('data', collect)
    this.procs.push(proc)
    if (kind === 'web') {
      for (let i = 0; ; i++) {
        if ((await http(port!, '/api/v1/health').catch(() => undefined))?.status) break
        if (i > 300) throw new Error('web process did not start')
        await sleep(100)
      }
    } else {
      await sleep(1500) // a worker has no port to ask; its jobs are checked through the queue afterwards
    }
    return proc
  }

  /** kill -9, and the process is forgotten. */
  async kill(proc: Proc): Promise<void> {
    this.procs = this.procs.filter((p) => p !== proc)
    await new Promise((r) => {
      proc.child.once('exit', r)
      proc.child.kill('SIGKILL')
    })
  }

  /** Seconds until every web process answers health 200. */
  async healthy(timeoutMs = 60_000): Promise<number> {
    const started = Date.now()
    while (
      !(await Promise.all(this.webs.map((w) => http(w.port!, '/api/v1/health').catch(() => undefined)))).every((h) => h?.status === 200)
    ) {
      if (Date.now() - started > timeoutMs) throw new Error(`not healthy within ${timeoutMs} ms`)
      await sleep(100)
    }
    return Math.round((Date.now() - started) / 100) / 10
  }

  /** Waits until every web process is healthy and the ingest queue is empty; returns the seconds it took. */
  async settle(timeoutMs = 60_000): Promise<number> {
    const started = Date.now()
    for (;;) {
      const health = await Promise.all(this.webs.map((w) => http(w.port!, '/api/v1/health').catch(() => undefined)))
      const counts = await this.queues
        .get('ingest')
        .getJobCounts('waiting', 'active', 'delayed')
        .catch(() => undefined)
      if (health.every((h) => h?.status === 200) && counts && counts.waiting + counts.active + counts.delayed === 0)
        return (Date.now() - started) / 1000
      if (Date.now() - started > timeoutMs)
        throw new Error(
          `did not settle within ${timeoutMs} ms: ${JSON.stringify({ health: health.map((h) => h?.status ?? 'no answer'), counts })}`,
        )
      await sleep(100)
    }
  }

  /**
   * Writes steadily on every path of `paths` (each on a stat of its own, alternating web processes) while `fault`
   * runs, and for a moment before and after; a path with a fixed number of points writes them all instead. Then
   * settles and checks every point against PostgreSQL: one result per path.
   */
  async drill(name: string, fault: () => Promise<void>, paths: WritePath[] = steadyPaths): Promise<DrillResult[]> {
    this.wipedAt = null
    const logStart = this.procs.map((p) => [p, p.lines.length] as const)
    const base = Math.floor(Date.now() / 1000) - 2 * 86_400
    let writing = true
    const ledgers = paths.map((path) => new Ledger(path, path.stat?.(name) ?? `drill.${name}.${path.name}`, base))
    this.ledgers = ledgers
    const running = ledgers.map(async (ledger) => {
      const { path } = ledger
      let next = 0
      const take = () => {
        if (path.points === undefined ? !writing : next >= path.points) return []
        const from = next
        next += Math.min(path.batch, (path.points ?? Infinity) - from)
        return Array.from({ length: next - from }, (_, k) => from + k)
      }
      await Promise.all(
        Array.from({ length: path.writers }, async (_, w) => {
          for (let items = take(); items.length; items = take()) await path.write(this, ledger, items, w)
        }),
      )
    })
    await sleep(1500)
    await fault()
    const recoverySeconds = await this.healthy(this.settleTimeoutMs)
    await sleep(1500)
    writing = false
    await Promise.all(running)
    const written = ledgers.reduce((n, l) => n + l.outcome.size, 0)
    // A path of a fixed number of points (the backfill burst) may leave far more to persist than the steady ones.
    await this.settle(this.settleTimeoutMs + written / 5)
    const logLines = this.procs.reduce(
      (n, p) =>
        n +
        p.lines.slice(logStart.find(([q]) => q === p)?.[1] ?? 0).filter((l) => /"level":"(warn|error)"/.test(l) || !l.startsWith('{'))
          .length,
      0,
    )
    const results: DrillResult[] = []
    for (const ledger of ledgers)
      results.push({ drill: name, ...ledger.check(await storedOf(this.sql, ledger.stat), this.wipedAt), recoverySeconds, logLines })
    return results
  }

  /**
   * One request to a web process (the `w + attempt`-th, so that retries move on); undefined when it went unanswered,
   * status 0 when the connection was refused (nothing was sent: a killed web process's port).
   */
  async send(w: number, attempt: number, path: string, body: unknown, headers: Record<string, string> = {}) {
    const webs = this.webs
    const web = webs[(w + attempt) % webs.length]
    return http(web.port!, path, { json: body, bearer: this.key, headers, timeoutMs: 10_000 }).catch((err: Error) =>
      (err.cause as { code?: string } | undefined)?.code === 'ECONNREFUSED'
        ? { status: 0, headers: new Headers(), body: undefined }
        : undefined,
    )
  }

  async close(): Promise<void> {
    for (const p of this.procs) p.child.kill('SIGKILL')
    await this.queues.close().catch(() => {})
    this.queueRedis.disconnect()
    await this.sql.end({ timeout: 1 }).catch(() => {})
    await Promise.all([this.pg.destroy(), this.redis.destroy()])
  }
}

export async function http(
  port: number,
  path: string,
  opts: { json?: unknown; bearer?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
) {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.json !== undefined) headers['content-type'] = 'application/json'
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: opts.json !== undefined ? 'POST' : 'GET',
    headers,
    body: opts.json !== undefined ? JSON.stringify(opts.json) : undefined,
    signal: AbortSignal.timeout(opts.timeoutMs ?? 5000),
  })
  const text = await res.text()
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return { status: res.status, headers: res.headers, body }
}

/** A fault drill: the fault alone (written through while it runs on every steady path), or with the paths to write on. */
export type Drill = Fault | { fault: Fault; paths: WritePath[] }
type Fault = (rig: DrillRig) => Promise<void>

/** Runs a drill on a rig: one result per path. */
export function runDrill(rig: DrillRig, name: string, drill: Drill): Promise<DrillResult[]> {
  return typeof drill === 'function' ? rig.drill(name, () => drill(rig)) : rig.drill(name, () => drill.fault(rig), drill.paths)
}

/** The drills, by name; `outageSeconds` is the length of the long outages (20 in `npm run drills`). */
export function drills(outageSeconds: number): Record<string, Drill> {
  return {
    'worker-kill': async (rig) => {
      for (let k = 0; k < 3; k++) {
        await rig.kill(rig.workers[0])
        await sleep(500)
        await rig.spawn('worker')
      }
    },
    'web-kill': async (rig) => {
      const web = rig.webs[0]
      await rig.kill(web)
      await sleep(1000)
      await rig.spawn('web', web.port)
    },
    'two-workers-one-killed': async (rig) => {
      await rig.spawn('worker')
      await sleep(1000)
      await rig.kill(rig.workers[0])
    },
    'redis-restart': async (rig) => {
      await rig.redis.stop()
      await sleep(2000)
      await rig.redis.start()
    },
    'redis-outage': async (rig) => {
      await rig.redis.stop()
      await sleep(outageSeconds * 1000)
      await rig.redis.start()
    },
    'redis-empty-restart': async (rig) => {
      await rig.redis.kill()
      rig.wipedAt = Date.now()
      rig.redis.wipe()
      await sleep(1000)
      await rig.redis.start()
    },
    'postgres-restart': async (rig) => {
      await rig.pg.stop()
      await sleep(2000)
      await rig.pg.start()
    },
    'postgres-outage': async (rig) => {
      await rig.pg.stop()
      await sleep(outageSeconds * 1000)
      await rig.pg.start()
    },
    // Every acknowledged point of a million-point history import is found afterwards, through a worker killed mid-burst.
    'backfill-burst': {
      paths: [backfillPath()],
      fault: async (rig) => {
        await sleep(3000)
        await rig.kill(rig.workers[0])
        await sleep(500)
        await rig.spawn('worker')
      },
    },
  }
}

type Outcome = 'accepted' | 'refused' | 'unknown'

/** What a drill sent on one path and what the service answered, point by point (a point is its number `i`, its value). */
export class Ledger {
  readonly outcome = new Map<number, Outcome>()
  /**
   * When the accepted attempt of each point was sent. A wipe counts what was sent before it: an answer can come
   * after the wipe for a point Redis took before it (a keyed write's answer waits on recording its ikey, which
   * waits on the Redis that was just killed).
   */
  readonly acceptedSentAt = new Map<number, number>()
  /** When the answer accepting each point arrived: a point acknowledged before a recovery point must be restored. */
  readonly acceptedAt = new Map<number, number>()
  /** Paths without `t`: the seconds each attempt that may have landed (accepted or unanswered) was in flight over. */
  readonly inFlight = new Map<number, Array<[number, number]>>()
  constructor(
    readonly path: WritePath,
    readonly stat: string,
    readonly base: number,
  ) {}

  t(i: number): number {
    return this.path.t!(this.base, i)
  }

  settle(items: number[], outcome: Outcome, sentAt = Date.now()): void {
    for (const i of items) {
      this.outcome.set(i, outcome)
      if (outcome === 'accepted') {
        this.acceptedSentAt.set(i, sentAt)
        this.acceptedAt.set(i, Date.now())
      }
    }
  }

  /** The counts of DrillResult from what PostgreSQL holds of the path's stat (`stored`: by value). */
  check(stored: Map<number, StoredValue>, wipedAt: number | null): Omit<DrillResult, 'drill' | 'recoverySeconds' | 'logLines'> {
    const of = (o: Outcome) => [...this.outcome].filter(([, v]) => v === o).map(([i]) => i)
    const accepted = of('accepted')
    const missing = accepted.filter((i) => !stored.has(i))
    // Sent before the wipe and accepted: the point may have been in the Redis that was wiped.
    const inWipe = wipedAt === null ? [] : missing.filter((i) => this.acceptedSentAt.get(i)! <= wipedAt)
    let misplaced = 0
    for (const [i, s] of stored) {
      const fits = this.path.t
        ? (t: number) => t === this.t(i)
        : (t: number) => (this.inFlight.get(i) ?? []).some(([from, to]) => t >= from && t <= to)
      if (!fits(s.minT) || !fits(s.maxT)) misplaced++
    }
    return {
      path: this.path.name,
      sent: this.outcome.size,
      accepted: accepted.length,
      stored: [...stored.values()].reduce((n, s) => n + s.n, 0),
      lost: missing.length - inWipe.length,
      lostInWipe: inWipe.length,
      wipeWindowMs: inWipe.length ? Math.max(...inWipe.map((i) => wipedAt! - this.acceptedSentAt.get(i)!)) : null,
      // Every path sends a point at most once in a way that may store it twice only if the service dedups it:
      // with an ikey the retries do, without one the writer never retries what may have landed. So any copy is one too many.
      duplicated: [...stored.values()].reduce((n, s) => n + s.n - 1, 0),
      misplaced,
      storedRefused: of('refused').filter((i) => stored.has(i)).length,
      unknownOutcome: of('unknown').length,
    }
  }
}

export interface StoredValue {
  n: number
  minT: number
  maxT: number
}

/** Every point of a drill's stat, by value. (Reads the points table: a drill of stored blocks reads through them here.) */
export async function storedOf(sql: Sql, stat: string): Promise<Map<number, StoredValue>> {
  const rows = await sql<Array<StoredValue & { value: number }>>`
    select p.value, count(*)::int as n, min(extract(epoch from p.ts))::bigint::int as "minT", max(extract(epoch from p.ts))::bigint::int as "maxT"
    from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.name = ${stat} group by p.value`
  return new Map(rows.map((r) => [r.value, r]))
}

/**
 * One way clients write. `write` sends the points `items` (value i, at `ledger.t(i)` when the path sends `t`) and
 * settles each one's outcome in the ledger: accepted, refused (an error status: by the interface, it did not land),
 * or unknown (some attempt went unanswered, so it may have landed, and no later attempt was accepted).
 */
export interface WritePath {
  name: string
  /** Points per request. */
  batch: number
  /** Concurrent writers. */
  writers: number
  /** A fixed number of points to write (all of them, however long the fault lasts); steady writing while the drill runs otherwise. */
  points?: number
  /** The point's explicit `t`; absent for a path that sends none. */
  t?: (base: number, i: number) => number
  /** The stat written (default `drill.<drill>.<path>`). */
  stat?: (drill: string) => string
  write(rig: DrillRig, ledger: Ledger, items: number[], w: number): Promise<void>
}

/**
 * Sends one request until it is answered 200, retrying the same body for up to 30 s on 5xx, 429, a refused connection
 * or no answer (as a
 * careful client does when every point carries `t` and `ikey`, so that a resend is deduplicated). `accepted` says how
 * many leading items an answer accepted (a partly stored /ez batch).
 */
async function sendWithRetries(
  rig: DrillRig,
  ledger: Ledger,
  items: number[],
  w: number,
  path: string,
  body: unknown,
  headers?: Record<string, string>,
  accepted: (body: any) => number = () => 0,
) {
  const deadline = Date.now() + 30_000
  let unanswered = false
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const sentAt = Date.now()
    const res = await rig.send(w, attempt, path, body, headers)
    if (res?.status === 200) return ledger.settle(items, 'accepted', sentAt)
    if (res?.status && res.status < 500 && res.status !== 429) {
      const n = accepted(res.body)
      ledger.settle(items.slice(0, n), 'accepted', sentAt)
      return ledger.settle(items.slice(n), unanswered ? 'unknown' : 'refused')
    }
    unanswered ||= !res
    await sleep(200)
  }
  ledger.settle(items, unanswered ? 'unknown' : 'refused')
}

const pastT = (base: number, i: number) => base + i

/** The drills' first path: single v1 writes with `t` and `ikey`, resent alike until answered. On `drill.<drill>`. */
export const singleWithIkey: WritePath = {
  name: 'single-ikey',
  batch: 1,
  writers: 2,
  t: pastT,
  stat: (drill) => `drill.${drill}`,
  write: (rig, ledger, [i], w) =>
    sendWithRetries(rig, ledger, [i], w, `/api/v1/stats/${encodeURIComponent(ledger.stat)}/value`, {
      value: i,
      t: ledger.t(i),
      ikey: `p${i}`,
    }),
}

/**
 * Single v1 writes with neither `t` nor `ikey`, the most common write. The service stores each at its arrival second
 * and cannot tell a resend from a new reading (docs/decisions.md §I-4.1.4: a retry double-counts), so the writer resends only
 * after an error status (which means the point did not land) or a refused connection (nothing was sent), never after
 * no answer (the point's outcome is then unknown). "Nothing doubled" is then exact: every value is stored at most once, at a second one of its attempts that
 * may have landed was in flight in (the match by value and second), and an error status stored nothing.
 */
export const singlePlain: WritePath = {
  name: 'single-plain',
  batch: 1,
  writers: 2,
  write: async (rig, ledger, [i], w) => {
    const deadline = Date.now() + 30_000
    const windows: Array<[number, number]> = []
    ledger.inFlight.set(i, windows)
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const sentAt = Date.now()
      const res = await rig.send(w, attempt, `/api/v1/stats/${encodeURIComponent(ledger.stat)}/value`, { value: i })
      if (!res || res.status === 200) windows.push([Math.floor(sentAt / 1000), Math.floor(Date.now() / 1000)])
      if (!res) return ledger.settle([i], 'unknown')
      if (res.status === 200) return ledger.settle([i], 'accepted', sentAt)
      if (res.status && res.status < 500 && res.status !== 429) return ledger.settle([i], 'refused')
      await sleep(200)
    }
    ledger.settle([i], 'refused')
  },
}

/** `/ez` JSON batches of 20 (strict mode, so that a failure has its status), every item with `t` (a digit string, as the predecessor's sample sends it) and `ikey`. */
export const ezBatch: WritePath = {
  name: 'ez-batch',
  batch: 20,
  writers: 1,
  t: pastT,
  write: (rig, ledger, items, w) =>
    sendWithRetries(
      rig,
      ledger,
      items,
      w,
      '/ez',
      { ezkey: rig.key, data: items.map((i) => ({ stat: ledger.stat, value: i, t: String(ledger.t(i)), ikey: `e${i}` })) },
      { 'x-service-strict': '1' },
      (body) => Number(body?.accepted) || 0,
    ),
}

function pointsBatch(name: string, batch: number, writers: number, t: (base: number, i: number) => number, points?: number): WritePath {
  return {
    name,
    batch,
    writers,
    t,
    points,
    write: (rig, ledger, items, w) =>
      sendWithRetries(rig, ledger, items, w, '/api/v1/points', {
        points: items.map((i) => ({ stat: ledger.stat, value: i, t: ledger.t(i), ikey: `b${i}` })),
      }),
  }
}

/** `/api/v1/points` batches of 100, every point with `t` and `ikey`. */
export const v1Batch = pointsBatch('points-batch', 100, 1, pastT)

/** What every fault drill writes on while its fault runs. */
export const steadyPaths: WritePath[] = [singleWithIkey, singlePlain, ezBatch, v1Batch]

/**
 * A history import: `DRILL_BACKFILL_POINTS` points (default a million) in `/api/v1/points` batches of 1,000 from 4
 * writers, one a second from 20 days back (t wraps after 18 days' worth, values stay distinct).
 */
export function backfillPath(points = Number(process.env.DRILL_BACKFILL_POINTS ?? 1_000_000)): WritePath {
  return pointsBatch('backfill', 1000, 4, (base, i) => base - 20 * 86_400 + (i % (18 * 86_400)), points)
}
