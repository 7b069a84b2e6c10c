// The Numenta Anomaly Benchmark's labelled series (../shared/data/nab beside the project, or BENCH_NAB_DIR),
// bucketed hourly for the anomaly detector: the loader and NAB's scoring, hour for row.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { HOUR } from '../shared/anomalies/detector.js'
import type { LabelledSeries } from './anomaly-corpus.js'

const here = dirname(fileURLToPath(import.meta.url))
/** `../shared/data/nab` beside the project (the team's shared folder), or BENCH_NAB_DIR. */
export const NAB_DIR = process.env.BENCH_NAB_DIR || resolve(here, '../../shared/data/nab')

export interface NabSeries extends LabelledSeries {
  file: string
  /** NAB's probationary period in hours: the first 15 % of the series (at most 750 rows), neither scored nor counted. */
  probation: number
  /**
   * The split fixed before tuning (docs/anomalies.md "Tuning and held-out series"): within each group, files in name
   * order, the 1st, 3rd, 5th ... are tuned on, the 2nd, 4th ... held out; the targets are judged on the held-out half.
   */
  half: 'tune' | 'held-out'
}

function csvFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? csvFiles(p) : f.endsWith('.csv') ? [p] : []
  })
}

const nabTime = (s: string) => Date.parse(`${s.trim().replace(' ', 'T')}Z`) / 1000

/**
 * Where the labels and the group folders are: NAB's own layout (labels/combined_windows.json, data/<group>/)
 * or the flat copy in the team's folder (combined_windows.json beside the group folders).
 */
export function nabLayout(dir = NAB_DIR): { labelsFile: string; dataDir: string } | null {
  if (existsSync(join(dir, 'labels', 'combined_windows.json')))
    return { labelsFile: join(dir, 'labels', 'combined_windows.json'), dataDir: join(dir, 'data') }
  if (existsSync(join(dir, 'combined_windows.json'))) return { labelsFile: join(dir, 'combined_windows.json'), dataDir: dir }
  return null
}

/** NAB series of the given groups (all when empty), bucketed hourly (gauge means), windows mapped to hour indexes. */
export function loadNab(groups: readonly string[] = [], dir = NAB_DIR): NabSeries[] {
  const { labelsFile, dataDir } = nabLayout(dir)!
  const labels = JSON.parse(readFileSync(labelsFile, 'utf8')) as Record<string, Array<[string, string]>>
  const out: NabSeries[] = []
  for (const file of csvFiles(dataDir).sort()) {
    const key = relative(dataDir, file).split('\\').join('/')
    const group = key.split('/')[0]
    if (groups.length > 0 && !groups.includes(group)) continue
    const rows = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','))
      .map(([t, v]) => [nabTime(t), Number(v)] as const)
      .filter(([t, v]) => Number.isFinite(t) && Number.isFinite(v))
    if (rows.length < 2) continue
    const first = Math.floor(rows[0][0] / HOUR) * HOUR
    const hours = Math.floor((rows[rows.length - 1][0] - first) / HOUR) + 1
    const sum = new Array<number>(hours).fill(0)
    const n = new Array<number>(hours).fill(0)
    for (const [t, v] of rows) {
      const i = Math.floor((t - first) / HOUR)
      sum[i] += v
      n[i]++
    }
    const values = sum.map((s, i) => (n[i] ? s / n[i] : null)) as number[]
    const windows = (labels[key] ?? []).map(
      ([a, b]) =>
        [Math.max(0, Math.floor((nabTime(a) - first) / HOUR)), Math.min(hours - 1, Math.floor((nabTime(b) - first) / HOUR))] as [
          number,
          number,
        ],
    )
    // NAB: 15 % of the rows, at most 750 rows; in hours, the same share of the hours and the 750 rows' span.
    const rowsPerHour = rows.length / hours
    const probation = Math.min(Math.floor(0.15 * hours), Math.floor(750 / Math.max(1, rowsPerHour)))
    const half = out.filter((o) => o.group === `NAB ${group}`).length % 2 ? 'held-out' : 'tune'
    out.push({ group: `NAB ${group}`, file: key, kind: 'gauge', values, windows, probation, half })
  }
  return out
}
