// Fault drills (issue 11): the service as operators run it, two web processes
// and a worker as child processes, against a PostgreSQL and a Redis of the
// drill's own, under steady single-point writes while a fault is injected.
// Every point has its own second, value and ikey; the writer retries a failed
// or unanswered write with the same ikey, as a careful client does. Afterwards
// every accepted point is looked up in PostgreSQL: accepted, stored, lost,
// duplicated, stored-though-refused and unknown-outcome counts per drill.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { createSql, type Sql } from '../../shared/db.js'
import { Queues } from '../../shared/queues.js'
import { createRedis } from '../../shared/redis.js'
import { closedPort } from '../helpers/http.js'
import { serviceArgs } from '../helpers/processes.js'
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js'
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server.js'

export interface DrillResult {
  drill: string
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
  /** Seconds from the fault's end until every process served again (health 200). */
  recoverySeconds: number
  /** Log lines of level warn or error written by the processes during the drill. */
  logLines: number
}

interface Proc {
  kind: 'web' | 'worker'
  child: ChildProcess
  port?: number
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
  private constructor(readonly pg: OwnPostgres, readonly redis: OwnRedis, readonly prefix: string, private readonly settings: Record<string, string>) {}

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
    if (signup.status !== 201) throw new Error(`sign-up failed: ${signup.status} ${JSON.stringify(signup.body)}\n${rig.webs[0].lines.join("\n")}`)
    await rig.sql`update accounts set plan = 'business' where id = ${signup.body.account.id}`
    const cookie = signup.headers.getSetCookie().find((c) => c.startsWith('service_session='))!.split(';')[0]
    const created = await http(web, '/api/v1/auth/api-keys', { json: { label: 'drill' }, headers: { cookie, 'x-service-csrf': signup.body.csrf_token } })
    rig.key = created.body.key
    return rig
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
    const env = { ...process.env, NODE_ENV: 'development', DATABASE_URL: this.pg.url, REDIS_URL: this.redis.url, REDIS_PREFIX: this.prefix,
      LOG_LEVEL: 'warn', ALERT_EVAL_INTERVAL_SECONDS: '2', ...this.settings, ...(port ? { PORT: String(port) } : {}) }
    const child = spawn(process.execPath, serviceArgs(kind === 'web' ? 'api/server.ts' : 'workers/main.ts'), { env, stdio: ['ignore', 'pipe', 'pipe'] })
    const proc: Proc = { kind, child, port, lines: [] }
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
    await new Promise((r) => { proc.child.once('exit', r); proc.child.kill('SIGKILL') })
  }

  /** Seconds until every web process answers health 200. */
  private async healthy(timeoutMs = 60_000): Promise<number> {
    const started = Date.now()
    while (!(await Promise.all(this.webs.map((w) => http(w.port!, '/api/v1/health').catch(() => undefined)))).every((h) => h?.status === 200)) {
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
      const counts = await this.queues.get('ingest').getJobCounts('waiting', 'active', 'delayed').catch(() => undefined)
      if (health.every((h) => h?.status === 200) && counts && counts.waiting + counts.active + counts.delayed === 0) return (Date.now() - started) / 1000
      if (Date.now() - started > timeoutMs) throw new Error(`did not settle within ${timeoutMs} ms: ${JSON.stringify({ health: health.map((h) => h?.status ?? 'no answer'), counts })}`)
      await sleep(100)
    }
  }

  /**
   * Writes steadily (4 writers, alternating web processes) while `fault` runs, and for a moment before and after;
   * then settles and checks every point against PostgreSQL.
   */
  async drill(name: string, fault: () => Promise<void>): Promise<DrillResult> {
    const stat = `drill.${name}`
    const outcome = new Map<number, 'accepted' | 'refused' | 'unknown'>()
    const acceptedAt = new Map<number, number>()
    this.wipedAt = null
    const logStart = this.procs.map((p) => [p, p.lines.length] as const)
    const base = Math.floor(Date.now() / 1000) - 86_400
    let next = 0
    let writing = true
    const writer = async (w: number) => {
      while (writing) {
        const i = next++
        const o = await this.writeWithRetries(stat, i, base + i, w)
        outcome.set(i, o)
        if (o === 'accepted') acceptedAt.set(i, Date.now())
      }
    }
    const writers = Array.from({ length: 4 }, (_, w) => writer(w))
    await sleep(1500)
    await fault()
    const recoverySeconds = await this.healthy(this.settleTimeoutMs)
    await sleep(1500)
    writing = false
    await Promise.all(writers)
    await this.settle(this.settleTimeoutMs)
    const rows = await this.sql<{ value: number; n: number }[]>`
      select p.value, count(*)::int as n from points p join stats s on s.id = p.stat_id where s.name = ${stat} group by p.value`
    const stored = new Map(rows.map((r) => [r.value, r.n]))
    const of = (o: string) => [...outcome].filter(([, v]) => v === o).map(([i]) => i)
    const accepted = of('accepted')
    const missing = accepted.filter((i) => !stored.has(i))
    const wipedAt = this.wipedAt
    // Answered before the wipe: the point was in the Redis that was wiped.
    const inWipe = wipedAt === null ? [] : missing.filter((i) => acceptedAt.get(i)! <= wipedAt)
    const logLines = this.procs.reduce((n, p) => n + p.lines.slice(logStart.find(([q]) => q === p)?.[1] ?? 0).filter((l) => /"level":"(warn|error)"/.test(l) || !l.startsWith('{')).length, 0)
    return {
      drill: name,
      sent: outcome.size,
      accepted: accepted.length,
      stored: rows.reduce((n, r) => n + r.n, 0),
      lost: missing.length - inWipe.length,
      lostInWipe: inWipe.length,
      wipeWindowMs: inWipe.length ? Math.max(...inWipe.map((i) => wipedAt! - acceptedAt.get(i)!)) : null,
      duplicated: [...stored.values()].reduce((n, c) => n + c - 1, 0),
      storedRefused: of('refused').filter((i) => stored.has(i)).length,
      unknownOutcome: of('unknown').length,
      recoverySeconds,
      logLines,
    }
  }

  /** One point, retried with the same ikey for up to 30 s on 5xx or no answer; a 4xx is a definite refusal. */
  private async writeWithRetries(stat: string, i: number, t: number, w: number): Promise<'accepted' | 'refused' | 'unknown'> {
    const deadline = Date.now() + 30_000
    let last: 'refused' | 'unknown' = 'unknown'
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const webs = this.webs
      const web = webs[(w + attempt) % webs.length]
      try {
        const res = await http(web.port!, `/api/v1/stats/${encodeURIComponent(stat)}/value`, { json: { value: i, t, ikey: `p${i}` }, bearer: this.key, timeoutMs: 10_000 })
        if (res.status === 200) return 'accepted'
        if (res.status < 500 && res.status !== 429) return 'refused'
        last = 'refused'
      } catch {
        last = 'unknown'
      }
      await sleep(200)
    }
    return last
  }

  async close(): Promise<void> {
    for (const p of this.procs) p.child.kill('SIGKILL')
    await this.queues.close().catch(() => {})
    this.queueRedis.disconnect()
    await this.sql.end({ timeout: 1 }).catch(() => {})
    await Promise.all([this.pg.destroy(), this.redis.destroy()])
  }
}

export async function http(port: number, path: string, opts: { json?: unknown; bearer?: string; headers?: Record<string, string>; timeoutMs?: number } = {}) {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.json !== undefined) headers['content-type'] = 'application/json'
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: opts.json !== undefined ? 'POST' : 'GET', headers, body: opts.json !== undefined ? JSON.stringify(opts.json) : undefined,
    signal: AbortSignal.timeout(opts.timeoutMs ?? 5000),
  })
  const text = await res.text()
  let body: any
  try { body = JSON.parse(text) } catch { body = text }
  return { status: res.status, headers: res.headers, body }
}

/** The drills, by name; `outageSeconds` is the length of the long outages (20 in `npm run drills`). */
export function drills(outageSeconds: number): Record<string, (rig: DrillRig) => Promise<void>> {
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
  }
}
