// The peer reference of the write bench: InfluxDB 1.x taking the
// same load (same load generator, connections and duration) as InfluxDB line
// protocol, one point per request and 100 points per request. It is what users
// would pick instead, so single writes are measured against it.
//
// The bench installs it (Debian package `influxdb`) when it is missing and it
// can (root with apt-get), and otherwise prints a skip line. It runs on free
// ports with its own data directory under /tmp, so that nothing else on the
// machine is disturbed, and it is stopped (its directory removed) when the
// bench ends. BENCH_INFLUX=0 skips it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LoadResult, RequestSpec, Target } from './load.js'
import { freePort, HOST, type Children } from './procs.js'
import { sleep } from './stats.js'
import { runLoadProcess } from './workloads.js'

export interface InfluxPhase {
  load: LoadResult
  pointsPerRequest: number
  /** Points the series count shows after the load (InfluxDB answers once a write is in its WAL and queryable). */
  stored: number
  storedPointsPerSec: number
}

const BINARIES = ['/usr/bin/influxd', '/usr/local/bin/influxd']

function findInfluxd(): string | undefined {
  for (const b of BINARIES) if (existsSync(b)) return b
  const which = spawnSync('sh', ['-c', 'command -v influxd'], { encoding: 'utf8' })
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : undefined
}

/** Installs the Debian package when we may (root, apt-get present); returns why not otherwise. */
function install(say: (s: string) => void): string | undefined {
  if (process.getuid?.() !== 0) return 'influxd is not installed and the bench is not root (install the Debian package influxdb)'
  if (spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) return 'influxd is not installed and there is no apt-get here'
  say('InfluxDB reference: installing the Debian package influxdb (apt-get, once)')
  // The package's service is not started: the bench runs its own instance on its own ports.
  const r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'influxdb'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    timeout: 300_000,
  })
  if (r.status !== 0)
    return `apt-get install influxdb failed (code ${r.status}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-2).join(' ')}`
  return findInfluxd() ? undefined : 'apt-get installed influxdb but no influxd binary was found'
}

export class InfluxRef {
  private constructor(
    private readonly proc: ChildProcess,
    private readonly dir: string,
    readonly target: Target,
    private readonly children: Children,
  ) {}

  /** Starts a private InfluxDB, or returns the reason it cannot (the caller prints a skip line). */
  static async start(children: Children, say: (s: string) => void): Promise<InfluxRef | { skipped: string }> {
    if (process.env.BENCH_INFLUX === '0') return { skipped: 'BENCH_INFLUX=0' }
    let bin = findInfluxd()
    if (!bin) {
      const why = install(say)
      if (why) return { skipped: why }
      bin = findInfluxd()!
    }
    const dir = mkdtempSync('/tmp/bench-influx-')
    const [http, rpc] = [await freePort(), await freePort()]
    // Defaults otherwise (inmem index, WAL without fsync delay), as the peer benchmark in shared/bench runs it.
    writeFileSync(
      join(dir, 'influxdb.conf'),
      [
        'reporting-disabled = true',
        `bind-address = "${HOST}:${rpc}"`,
        `[meta]\n  dir = "${dir}/meta"`,
        `[data]\n  dir = "${dir}/data"\n  wal-dir = "${dir}/wal"\n  query-log-enabled = false`,
        '[monitor]\n  store-enabled = false',
        `[http]\n  enabled = true\n  bind-address = "${HOST}:${http}"\n  auth-enabled = false\n  log-enabled = false\n  write-tracing = false\n  pprof-enabled = false`,
        '[continuous_queries]\n  enabled = false',
        '[logging]\n  level = "warn"',
        '',
      ].join('\n'),
    )
    const proc = spawn(bin, ['run', '-config', join(dir, 'influxdb.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)))
    if (proc.pid !== undefined) children.pids.set(proc.pid, 'influxdb')
    const ref = new InfluxRef(proc, dir, { host: HOST, port: http }, children)
    const until = Date.now() + 30_000
    while (Date.now() < until) {
      if (proc.exitCode !== null) break
      try {
        const r = await fetch(`http://${HOST}:${http}/query`, {
          method: 'POST',
          body: new URLSearchParams({ q: 'CREATE DATABASE bench' }),
          signal: AbortSignal.timeout(1000),
        })
        if (r.ok) return ref
      } catch {
        /* not up yet */
      }
      await sleep(200)
    }
    await ref.stop()
    return { skipped: `influxd did not start within 30 s: ${stderr.trim().split('\n').slice(-2).join(' ') || 'no output'}` }
  }

  /**
   * `pointsPerRequest` points per request on `connections` connections for `durationMs` after a warm-up.
   * Each request's lines have distinct series and no timestamp (the server's clock, as /ez without t), so
   * that no point overwrites another and the stored count shows every accepted point.
   */
  async run(
    name: string,
    o: { connections: number; durationMs: number; warmupMs: number; pointsPerRequest: number; accounts: number },
  ): Promise<InfluxPhase> {
    const measurement = `bench${o.pointsPerRequest}`
    const groups = (m: string): RequestSpec[][] =>
      Array.from({ length: o.accounts }, (_, a) =>
        Array.from({ length: 8 }, (_, k) => ({
          method: 'POST' as const,
          path: '/write?db=bench',
          headers: { 'Content-Type': 'text/plain' },
          body: Array.from(
            { length: o.pointsPerRequest },
            (_, i) => `${m},account=a${a},stat=s${o.pointsPerRequest === 1 ? k : i} count=1`,
          ).join('\n'),
        })),
      )
    const load = await runLoadProcess(this.children, `load-${name}`, {
      targets: [this.target],
      connections: o.connections,
      warmup: { durationMs: o.warmupMs, groups: groups(`warm${measurement}`) },
      measure: { durationMs: o.durationMs, groups: groups(measurement) },
    })
    let stored = -1
    for (let i = 0; i < 20; i++) {
      const n = await this.count(measurement)
      if (n === stored) break
      stored = n
      await sleep(300)
    }
    return { load, pointsPerRequest: o.pointsPerRequest, stored, storedPointsPerSec: Math.round((stored / load.windowMs) * 1000) }
  }

  private async count(measurement: string): Promise<number> {
    const r = await fetch(
      `http://${this.target.host}:${this.target.port}/query?db=bench&q=${encodeURIComponent(`SELECT COUNT("count") FROM "${measurement}"`)}`,
    )
    const j = (await r.json()) as { results?: Array<{ series?: Array<{ values: unknown[][] }> }> }
    return Number(j.results?.[0]?.series?.[0]?.values?.[0]?.[1] ?? 0)
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise<void>((r) => this.proc.once('exit', () => r()))
      this.proc.kill('SIGTERM')
      if (!(await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]))) this.proc.kill('SIGKILL')
    }
    rmSync(this.dir, { recursive: true, force: true })
  }

  /** Last resort from a synchronous exit handler. */
  killNow(): void {
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL')
    rmSync(this.dir, { recursive: true, force: true })
  }
}
