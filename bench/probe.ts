// Phase 3's probe: writes one point to a stat of its own (a new stat each
// time) through /ez, then polls GET /api/v1/stats/:name every 20 ms until the
// point shows up, and records the delay from the write's answer to the first
// read that shows it.
import http from 'node:http'
import { percentile, round, sleep } from './stats.js'
import type { Target } from './load.js'

export interface ProbeResult {
  launched: number
  visible: number
  /** Probes whose write was not accepted (status of the envelope not 200). */
  writeFailed: number
  /** Accepted but never visible within the probe timeout. */
  neverVisible: number
  delaysMs: { p50: number; p90: number; p99: number; max: number }
  /** Statuses of the read polls, for diagnosis (404 while the stat does not exist yet, for instance). */
  readStatus: Record<string, number>
  failures: string[]
}

interface Reply {
  status: number
  body: string
}

function request(
  agent: http.Agent,
  target: Target,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.host,
        port: target.port,
        method,
        path,
        agent,
        headers: { 'user-agent': 'metrics-bench-probe/1', ...headers },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error('probe request timed out')))
    req.on('error', reject)
    req.end(body)
  })
}

/** Sum of the `value` of every bucket in a stat-details response (null when the body has no points array). */
export function sumOfPoints(body: string): number | null {
  try {
    const json = JSON.parse(body) as { points?: Array<{ value?: unknown }> }
    if (!Array.isArray(json.points)) return null
    return json.points.reduce((s, p) => s + (typeof p.value === 'number' ? p.value : 0), 0)
  } catch {
    return null
  }
}

export interface ProbeOptions {
  targets: Target[]
  key: string
  /** Unique per run, so probes never meet an earlier run's stats. */
  runId: string
  count: number
  intervalMs: number
  pollMs: number
  timeoutMs: number
  /** Stop launching probes after this epoch ms. */
  launchUntil: number
}

export async function runProbes(o: ProbeOptions): Promise<ProbeResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
  const delays: number[] = []
  const readStatus: Record<string, number> = {}
  const failures: string[] = []
  let writeFailed = 0
  let neverVisible = 0
  let launched = 0

  const one = async (i: number) => {
    const target = o.targets[i % o.targets.length]
    const stat = `bench.probe.${o.runId}.${i}`
    const body = new URLSearchParams({ ezkey: o.key, stat, count: '1' }).toString()
    let w: Reply
    try {
      w = await request(
        agent,
        target,
        'POST',
        '/ez',
        { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) },
        body,
      )
    } catch (err) {
      writeFailed++
      failures.push(`probe ${i} write: ${(err as Error).message}`)
      return
    }
    const writtenAt = performance.now()
    let verdict: unknown
    try {
      verdict = (JSON.parse(w.body) as { status?: unknown }).status
    } catch {
      verdict = undefined
    }
    if (verdict !== 200) {
      writeFailed++
      failures.push(`probe ${i} write: HTTP ${w.status} ${w.body.slice(0, 200)}`)
      return
    }
    const path = `/api/v1/stats/${encodeURIComponent(stat)}?range=1h`
    while (performance.now() - writtenAt < o.timeoutMs) {
      try {
        const r = await request(agent, target, 'GET', path, { authorization: `Bearer ${o.key}` })
        readStatus[r.status] = (readStatus[r.status] ?? 0) + 1
        if (r.status === 200 && sumOfPoints(r.body) === 1) {
          delays.push(performance.now() - writtenAt)
          return
        }
        if (r.status !== 200 && r.status !== 404 && failures.length < 20)
          failures.push(`probe ${i} read: HTTP ${r.status} ${r.body.slice(0, 200)}`)
      } catch (err) {
        if (failures.length < 20) failures.push(`probe ${i} read: ${(err as Error).message}`)
      }
      await sleep(o.pollMs)
    }
    neverVisible++
  }

  const running: Promise<void>[] = []
  const start = performance.now()
  for (let i = 0; i < o.count && Date.now() < o.launchUntil; i++) {
    running.push(one(i))
    launched++
    const nextAt = start + (i + 1) * o.intervalMs
    await sleep(Math.max(0, nextAt - performance.now()))
  }
  await Promise.all(running)
  agent.destroy()
  const sorted = delays.sort((a, b) => a - b)
  return {
    launched,
    visible: delays.length,
    writeFailed,
    neverVisible,
    delaysMs: {
      p50: round(percentile(sorted, 0.5), 1),
      p90: round(percentile(sorted, 0.9), 1),
      p99: round(percentile(sorted, 0.99), 1),
      max: round(sorted.length ? sorted[sorted.length - 1] : NaN, 1),
    },
    readStatus,
    failures: failures.slice(0, 20),
  }
}
