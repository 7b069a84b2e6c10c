// Scoring a detector's flagged hours against labelled windows, and the plain
// 3-sigma z-score reference measured beside it.
import { MIN_SAMPLES, WINDOW_HOURS } from '../../shared/anomalies/detector.js'
import { replaySeries } from '../../shared/anomalies/backtest.js'
import type { Kind } from '../../shared/stats/repo.js'

export interface Tally {
  windows: number
  found: number
  scored: number
  /** Flagged hours outside every labelled window (a window's two following hours are not counted either way). */
  falseFlags: number
}

export const emptyTally = (): Tally => ({ windows: 0, found: 0, scored: 0, falseFlags: 0 })

export function tally(t: Tally, flagged: boolean[], windows: Array<[number, number]>, lo: number): void {
  const inWindow = (i: number) => windows.some(([a, b]) => i >= a && i <= b + 2)
  t.windows += windows.length
  t.found += windows.filter(([a, b]) => flagged.slice(a, b + 1).some(Boolean)).length
  for (let i = lo; i < flagged.length; i++) {
    t.scored++
    if (flagged[i] && !inWindow(i)) t.falseFlags++
  }
}

/** The detector's flagged hours (the back-test's `anomalous`), indexed like `values`. */
export function detectorFlags(kind: Kind, values: Array<number | null>, lo: number): boolean[] {
  const r = replaySeries(kind, values, 0, lo)
  const flags = new Array<boolean>(values.length).fill(false)
  r.hours.forEach((h, k) => (flags[lo + k] = h.anomalous))
  return flags
}

/** Plain z-score: |x - mean| > 3 sample standard deviations of the same trailing window (sliding sums, so the reference is cheap). */
export function zscoreFlags(values: Array<number | null>, lo: number): boolean[] {
  const flags = new Array<boolean>(values.length).fill(false)
  let n = 0
  let sum = 0
  let sq = 0
  const add = (v: number | null, sign: 1 | -1) => {
    if (v === null) return
    n += sign
    sum += sign * v
    sq += sign * v * v
  }
  for (let i = 0; i < values.length; i++) {
    // The window of hour i: the WINDOW_HOURS - 1 hours before it, as the detector's.
    if (i > 0) add(values[i - 1], 1)
    if (i - WINDOW_HOURS >= 0) add(values[i - WINDOW_HOURS], -1)
    const x = values[i]
    if (i < lo || x === null || n < MIN_SAMPLES) continue
    const mean = sum / n
    const sd = Math.sqrt(Math.max(0, (sq - n * mean * mean) / (n - 1)))
    flags[i] = Math.abs(x - mean) > 3 * sd + 1e-9 * Math.abs(mean)
  }
  return flags
}

export const recall = (t: Tally) => (t.windows ? t.found / t.windows : null)
export const falsePer1000 = (t: Tally) => (t.scored ? (1000 * t.falseFlags) / t.scored : 0)
