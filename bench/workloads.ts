// The requests each phase sends, and the load generator run as a child process.
import type { Children } from './procs.js'
import type { LoadConfig, LoadResult, RequestSpec } from './load.js'

const FORM = 'application/x-www-form-urlencoded'

/** Single-point /ez form posts: one request group per key, each cycling through `stats` stat names. */
export function singleGroups(keys: string[], statPrefix: string, stats: number): RequestSpec[][] {
  return keys.map((key) =>
    Array.from({ length: stats }, (_, k) => ({
      method: 'POST' as const,
      path: '/ez',
      headers: { 'Content-Type': FORM },
      body: `ezkey=${key}&stat=${statPrefix}${k}&count=1`,
    })),
  )
}

/** 100-point JSON batches on /ez: item i goes to stat `${statPrefix}${i % stats}`. */
export function batchGroups(keys: string[], statPrefix: string, stats: number, size = 100): RequestSpec[][] {
  return keys.map((key) => {
    const data = Array.from({ length: size }, (_, i) => ({ stat: `${statPrefix}${i % stats}`, count: 1 }))
    return [
      { method: 'POST' as const, path: '/ez', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ezkey: key, data }) },
    ]
  })
}

/** 1,000-point JSON batches on the v1 API (Bearer key): item i goes to stat `${statPrefix}${i % stats}`. */
export function v1BatchGroups(keys: string[], statPrefix: string, stats: number, size = 1000): RequestSpec[][] {
  return keys.map((key) => {
    const points = Array.from({ length: size }, (_, i) => ({ stat: `${statPrefix}${i % stats}`, count: 1 }))
    return [
      {
        method: 'POST' as const,
        path: '/api/v1/points',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: JSON.stringify({ points }),
      },
    ]
  })
}

/** Runs bench/load.ts in its own process and returns its result. */
export async function runLoadProcess(children: Children, name: string, cfg: LoadConfig, onMeasure?: () => void): Promise<LoadResult> {
  // The config goes through stdin: batch bodies make it too large for an environment variable.
  const child = children.start(name, 'bench/load.ts', { NODE_ENV: 'production' }, JSON.stringify({ ...cfg, announceMeasure: !!onMeasure }))
  if (onMeasure) {
    const poll = setInterval(() => {
      if (child.lines.includes('measuring')) {
        clearInterval(poll)
        onMeasure()
      }
    }, 20)
    void child.exit.then(() => clearInterval(poll))
  }
  await child.exit
  const line = child.lines.find((l) => l.startsWith('{"connections"'))
  if (child.exited?.code !== 0 || !line) throw new Error(`load generator ${name} failed (code ${child.exited?.code}):\n${child.tail()}`)
  return JSON.parse(line) as LoadResult
}

/**
 * InfluxDB line protocol requests of `size` lines on /api/v2/write: line i is the gauge
 * `${measurement}.account_a<n>.stat_s<i % stats>`, the same shape and length as the InfluxDB reference's lines
 * (which need a distinct series per line, or InfluxDB would keep only the last point of a request).
 */
export function lineProtocolGroups(keys: string[], measurement: string, stats: number, size = 5000): RequestSpec[][] {
  return keys.map((key, a) => {
    const body = Array.from({ length: size }, (_, i) => `${measurement},account=a${a},stat=s${i % stats} value=1`).join('\n')
    return [
      {
        method: 'POST' as const,
        path: '/api/v2/write?precision=s',
        headers: { 'Content-Type': 'text/plain; charset=utf-8', Authorization: `Token ${key}` },
        body,
      },
    ]
  })
}

/** The stat names lineProtocolGroups writes, per account index, for creating them before the phase. */
export function lineProtocolStatNames(measurement: string, account: number, stats: number): string[] {
  return Array.from({ length: stats }, (_, k) => `${measurement}.account_a${account}.stat_s${k}`)
}
